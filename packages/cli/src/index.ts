export { cli, CliFailure } from "./Cli.ts"
