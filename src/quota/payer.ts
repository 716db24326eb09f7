// Who a compile, a validate or a conversion is counted against: the part of accounts/' Caller
// that quota reads (an anonymous address, or an account's id and plan). Declared here so that
// quota/ stays below accounts/, which reads the plan table: a Caller is a Payer as it is.
import type { PlanName } from './plans.js';

export type Payer = { kind: 'anonymous'; ip: string } | { kind: 'account'; account: { id: number; plan: PlanName } };
