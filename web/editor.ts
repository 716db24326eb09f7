// The LaTeX editor (CodeMirror 6 with the stex mode). Loaded lazily by the studio.
import { StreamLanguage, type StreamParser } from '@codemirror/language';
import { stex } from '@codemirror/legacy-modes/mode/stex';
import { setDiagnostics } from '@codemirror/lint';
import { EditorState, StateEffect, StateField, type Extension } from '@codemirror/state';
import { Decoration, EditorView, keymap, type DecorationSet } from '@codemirror/view';
import { basicSetup } from 'codemirror';

export interface LatexEditor {
  view: EditorView;
  getValue(): string;
  setValue(text: string): void;
  /** Marks a line (1-based) as the error, with a message on hover and in the gutter. */
  markError(line: number, message: string): void;
  clearError(): void;
  /** Inserts text as a new line that becomes line `at` (1-based; lines + 1 appends). */
  insertLine(at: number, text: string): void;
  goToLine(line: number): void;
}

const setErrorLine = StateEffect.define<number | null>();

const errorLineField = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(decorations, tr) {
    decorations = decorations.map(tr.changes);
    for (const effect of tr.effects) {
      if (!effect.is(setErrorLine)) continue;
      if (effect.value === null) return Decoration.none;
      const line = tr.state.doc.line(effect.value);
      return Decoration.set([Decoration.line({ class: 'cm-error-line' }).range(line.from)]);
    }
    return decorations;
  },
  provide: (field) => EditorView.decorations.from(field),
});

const theme = EditorView.theme({
  '&': { height: '100%', fontSize: '14px', backgroundColor: '#fff' },
  '.cm-scroller': { fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace', lineHeight: '1.55' },
  '.cm-content': { padding: '8px 0' },
  '.cm-gutters': { backgroundColor: '#f6f7f9', color: '#5b6270', borderRight: '1px solid #dde1e7' },
  '.cm-activeLineGutter': { backgroundColor: '#e8ecf3', color: '#1d2330' },
  '.cm-error-line': { backgroundColor: '#fdecea' },
  '&.cm-focused': { outline: '2px solid #2451b7', outlineOffset: '-2px' },
});

export function createEditor(parent: HTMLElement, doc: string, options: { onRun: () => void; onChange: () => void; label: string }): LatexEditor {
  const extensions: Extension[] = [
    keymap.of([{ key: 'Mod-Enter', preventDefault: true, run: () => (options.onRun(), true) }]),
    basicSetup,
    // legacy-modes types its parser against its own copy of the stream interface.
    StreamLanguage.define(stex as unknown as StreamParser<unknown>),
    errorLineField,
    theme,
    EditorView.lineWrapping,
    EditorView.contentAttributes.of({ 'aria-label': options.label, 'aria-multiline': 'true' }),
    EditorView.updateListener.of((update) => {
      if (update.docChanged) options.onChange();
    }),
  ];
  const view = new EditorView({ state: EditorState.create({ doc, extensions }), parent });

  const clampLine = (line: number) => Math.min(Math.max(1, line), view.state.doc.lines);

  return {
    view,
    getValue: () => view.state.doc.toString(),
    setValue(text) {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text }, effects: setErrorLine.of(null) });
    },
    markError(line, message) {
      const at = view.state.doc.line(clampLine(line));
      view.dispatch(setDiagnostics(view.state, [{ from: at.from, to: at.to, severity: 'error', message }]));
      view.dispatch({ effects: [setErrorLine.of(at.number), EditorView.scrollIntoView(at.from, { y: 'center' })] });
    },
    clearError() {
      view.dispatch(setDiagnostics(view.state, []));
      view.dispatch({ effects: setErrorLine.of(null) });
    },
    insertLine(at, text) {
      const doc = view.state.doc;
      const change = at > doc.lines ? { from: doc.length, insert: '\n' + text } : { from: doc.line(clampLine(at)).from, insert: text + '\n' };
      view.dispatch({ changes: change });
    },
    goToLine(line) {
      const at = view.state.doc.line(clampLine(line));
      view.dispatch({ selection: { anchor: at.from }, effects: EditorView.scrollIntoView(at.from, { y: 'center' }) });
      view.focus();
    },
  };
}
