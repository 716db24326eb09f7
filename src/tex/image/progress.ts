// The one line a long image build shows on a terminal: which image, which step, how far, how
// long so far. On a terminal it rewrites itself; in a log it prints at most every 30 seconds.

export interface ProgressSink {
  write(text: string): unknown;
  isTTY?: boolean;
}

export function elapsed(ms: number): string {
  const s = Math.floor(ms / 1000);
  const m = Math.floor(s / 60);
  return m > 0 ? `${m}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

export function progressLine(label: string, step: string, percent: number, ms: number): string {
  return `quire texlive ${label}: ${step} ${Math.max(0, Math.min(100, Math.floor(percent)))}% (${elapsed(ms)})`;
}

export class Progress {
  private step = '';
  private lastPrint = 0;
  private lastText = '';

  constructor(
    private readonly label: string,
    private readonly sink: ProgressSink = process.stderr,
    private readonly now: () => number = Date.now,
    private readonly started = now(),
  ) {}

  /** `percent` is the whole build's, 0 to 100. */
  update(step: string, percent: number): void {
    const text = progressLine(this.label, step, percent, this.now() - this.started);
    if (text === this.lastText) return;
    const stepChanged = step !== this.step;
    this.step = step;
    if (this.sink.isTTY) {
      this.sink.write(`\r\x1b[K${text}`);
    } else if (stepChanged || this.now() - this.lastPrint >= 30_000) {
      this.sink.write(`${text}\n`);
      this.lastPrint = this.now();
    }
    this.lastText = text;
  }

  done(message: string): void {
    this.sink.write(`${this.sink.isTTY ? '\r\x1b[K' : ''}quire texlive ${this.label}: ${message} (${elapsed(this.now() - this.started)})\n`);
  }
}
