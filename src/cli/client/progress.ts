// A progress line for work that takes a while: on a terminal only, and only once a second has
// passed (a fast compile prints nothing but its result), redrawn in place and erased at the
// end. Pipes and CI logs get no control characters.

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
export const PROGRESS_AFTER_MS = 1000;

export interface Progress {
  /** What is happening now: "packing", "uploading and compiling on the server", "downloading the PDF". */
  stage(name: string): void;
  stop(): void;
}

export function startProgress(stream: NodeJS.WriteStream): Progress {
  const started = performance.now();
  let name = 'packing';
  let frame = 0;
  let shown = false;
  const draw = () => {
    const elapsed = ((performance.now() - started) / 1000).toFixed(1);
    stream.write(`\r\x1b[K${FRAMES[frame++ % FRAMES.length]} ${name}… ${elapsed} s`);
    shown = true;
  };
  let timer: NodeJS.Timeout | undefined;
  const begin = setTimeout(() => {
    draw();
    timer = setInterval(draw, 100);
  }, PROGRESS_AFTER_MS);
  if (!stream.isTTY) clearTimeout(begin);
  return {
    stage(next) {
      name = next;
    },
    stop() {
      clearTimeout(begin);
      clearInterval(timer);
      if (shown) stream.write('\r\x1b[K');
    },
  };
}
