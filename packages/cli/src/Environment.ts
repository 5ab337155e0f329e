/** Reading the CLI's environment variables through `Config`, so tests can supply them with a ConfigProvider. */
import { Config, Option } from "effect"

/** An optional variable; set but empty counts as unset (so `VAR= dock …` clears it), as the server reads it. */
export const optionalText = (name: string) =>
  Config.option(Config.string(name)).pipe(Config.map(Option.filter((value) => value.trim() !== "")))
