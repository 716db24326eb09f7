// The names and usage of the client commands, apart from their code: `quire` prints them in
// its usage and dispatches on them before it loads anything else (src/cli/quire.ts).

export const CLIENT_COMMANDS = new Set(['compile', 'watch', 'login']);

export const CLIENT_USAGE = `  compile [PATH] [-o OUT.pdf] [--engine pdflatex|xelatex|lualatex] [--texlive YEAR]
          [--main FILE] [--output-json '{…}'] [--server URL] [--key KEY]
          [--json] [--log] [--verbose]
              PATH (a .tex file or a project folder, default .) to a PDF on a Quire server
  watch [PATH] [same options]
              compile, then again on every saved change, until Ctrl-C
  login --server URL --key KEY
              save the server and key for compile and watch (~/.config/quire/config.json)`;
