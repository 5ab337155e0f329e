export * from "./Catalogue.ts"
export * from "./Dispatcher.ts"
export * from "./JsonSchema.ts"
export * from "./Tool.ts"
