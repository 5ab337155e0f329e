/** The one failure every `dock` command ends with: a message already phrased for a person, one line on stderr. */
import { Data } from "effect"

export class CliFailure extends Data.TaggedError("CliFailure")<{ readonly message: string }> {}
