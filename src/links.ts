// Addresses the service hands out in bodies, built from QUIRE_BASE_URL in one place.
import type { Config } from './config.js';

export interface Links {
  upgradeUrl: string;
  signupUrl: string;
}

export function links(config: Pick<Config, 'baseUrl'>): Links {
  return { upgradeUrl: `${config.baseUrl}/pricing`, signupUrl: `${config.baseUrl}/signup` };
}

/** The sign-up page as a next step, only while it is open: a closed page leads nowhere. */
export function openSignupUrl(config: Pick<Config, 'baseUrl' | 'signup'>): string | undefined {
  return config.signup === 'open' ? links(config).signupUrl : undefined;
}
