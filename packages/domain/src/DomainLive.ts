/**
 * Every domain service over an SqlClient, ready to provide. Infrastructure (the database, Limits,
 * PublicBaseUrl, a Mailer) comes from outside: the server's main or the testing layer.
 */
import { Layer } from "effect"
import { AccountsLive } from "./Accounts/AccountsLive.ts"
import { ActivityLive } from "./Activity/Activity.ts"
import { DocksLive } from "./Docks/DocksLive.ts"

export const DomainLive = Layer.mergeAll(AccountsLive, DocksLive).pipe(Layer.provideMerge(ActivityLive))
