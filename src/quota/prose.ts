// Plan facts in words, generated from the plan table, so a message, a tool description or a
// note never states a limit the table does not have ("Starter or above", "3 pages").
import { PLAN_NAMES, PLANS, type PlanName } from './plans.js';

const title = (plan: PlanName) => plan[0]!.toUpperCase() + plan.slice(1);

/** "Starter or above": the smallest plan with saved templates, stored assets and render. */
export function paidPlansPhrase(): string {
  const first = PLAN_NAMES.find((plan) => PLANS[plan].paid)!;
  return `${title(first)} or above`;
}

/** "pdflatex, 3 pages, 3 per day": what the keyless tier may do. */
export function anonymousTierPhrase(): string {
  const tier = PLANS.anonymous;
  return `${tier.compilers.join(', ')}, ${tier.maxPages} pages, ${tier.compilesPerPeriod} per day`;
}

/** What a free key adds over the keyless tier, for the keyless note. */
export function freeKeyPhrase(): string {
  const free = PLANS.free;
  const engines = free.compilers.filter((c) => !PLANS.anonymous.compilers.includes(c));
  return `A free API key gives ${free.compilesPerPeriod} compilations a month, ${free.maxPages} pages, ${[...engines, 'assets'].join(' and ')}.`;
}

/** How long keyless links live, in words ("1 hour"). */
export function anonymousLinkPhrase(): string {
  const hours = PLANS.anonymous.pdfLinkSeconds / 3600;
  return `${hours} hour${hours === 1 ? '' : 's'}`;
}
