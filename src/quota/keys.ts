// Names of counters, shared by the code that counts and the code that reports.
import { dayKey, hourKey, monthKey } from '../clock.js';

export const monthlyCompilesKey = (accountId: number, at: Date) => `compiles:account:${accountId}:${monthKey(at)}`;
export const anonymousDailyKey = (ip: string, at: Date) => `compiles:anon:${ip}:${dayKey(at)}`;
export const anonymousHourlyKey = (at: Date) => `compiles:anon-all:${hourKey(at)}`;
export const signupHourlyKey = (ip: string, at: Date) => `signups:ip:${ip}:${hourKey(at)}`;
export const renderMinuteKey = (accountId: number, at: Date) => `renders:account:${accountId}:${at.toISOString().slice(0, 16)}`;
export const validateMinuteKey = (caller: string, at: Date) => `validate:${caller}:${at.toISOString().slice(0, 16)}`;
/** Compiles of one caller in flight: leases only, never committed. */
export const inFlightKey = (caller: string) => `inflight:${caller}`;
/** Milliseconds of TeX the caller's failed compiles used in the window starting at `windowStart`. */
export const failureKey = (caller: string, windowStart: Date) => `failures:${caller}:${windowStart.toISOString()}`;
/** Diagnosis probe runs of one caller in one UTC minute. */
export const probeMinuteKey = (caller: string, at: Date) => `probes:${caller}:${at.toISOString().slice(0, 16)}`;
