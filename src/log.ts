// Structured logs. Credentials and PDF link signatures never reach them.
import pino, { type Logger } from 'pino';

const SIG = /([?&]sig=)[^&]*/g;

export function redactUrl(url: string): string {
  return url.replace(SIG, '$1[REDACTED]');
}

export function createLogger(level: string): Logger {
  return pino({
    level,
    redact: {
      paths: ['req.headers.authorization', 'req.headers["x-api-key"]', 'headers.authorization', 'headers["x-api-key"]'],
      censor: '[REDACTED]',
    },
    serializers: {
      req(req: { method?: string; url?: string; ip?: string; id?: string }) {
        return { id: req.id, method: req.method, url: redactUrl(req.url ?? ''), ip: req.ip };
      },
      res(res: { statusCode?: number }) {
        return { statusCode: res.statusCode };
      },
    },
  });
}
