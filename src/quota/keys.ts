// Names of counters, shared by the code that counts and the code that reports.
import { dayKey, hourKey, monthKey } from '../clock.js';

export const monthlyCompilesKey = (accountId: number, at: Date) => `compiles:account:${accountId}:${monthKey(at)}`;
export const anonymousDailyKey = (ip: string, at: Date) => `compiles:anon:${ip}:${dayKey(at)}`;
export const anonymousHourlyKey = (at: Date) => `compiles:anon-all:${hourKey(at)}`;
export const signupHourlyKey = (ip: string, at: Date) => `signups:ip:${ip}:${hourKey(at)}`;
export const renderMinuteKey = (accountId: number, at: Date) => `renders:account:${accountId}:${at.toISOString().slice(0, 16)}`;
export const validateMinuteKey = (caller: string, at: Date) => `validate:${caller}:${at.toISOString().slice(0, 16)}`;
