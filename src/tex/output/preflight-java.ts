// The Java side of the PDF/A-1b check: a small main class over Apache PDFBox Preflight
// (Debian libpdfbox2-java), compiled once per process with the TeX image's javac. Debian's
// preflight jar links javax.activation and javax.xml.bind, which Java 17 no longer ships;
// the two stand-ins below give it the few members it calls. The jar is copied into the
// job's workspace and run in the sandbox (pdfa-check.ts), or into a warm validator's
// (warm-validator.ts), whose PreflightServer validates the PDFs of one scope read from stdin.
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { defaultImageRoot } from '../image/default.js';
import { sandboxed } from '../sandbox/sandbox.js';

/** Debian's PDFBox 2 jars (libpdfbox2-java), on the sandbox's read-only /usr. */
export const PDFBOX_CLASSPATH = ['preflight', 'pdfbox2', 'xmpbox', 'fontbox2', 'commons-logging'].map((jar) => `/usr/share/java/${jar}.jar`);

/** Validations of the sample a warm validator runs before it says READY (the second is already fast). */
const WARMUPS = 2;

const SOURCES: Record<string, string> = {
  'Preflight.java': `
import java.io.File;
import org.apache.pdfbox.pdmodel.font.NoSystemFonts;
import org.apache.pdfbox.preflight.PreflightDocument;
import org.apache.pdfbox.preflight.ValidationResult;
import org.apache.pdfbox.preflight.exception.SyntaxValidationException;
import org.apache.pdfbox.preflight.parser.PreflightParser;
/** Prints VALID, or one line per error (code and details) and exits 2. */
public class Preflight {
  static { NoSystemFonts.install(); }
  public static void main(String[] args) throws Exception {
    int code = report(validate(new File(args[0])));
    if (code != 0) System.exit(code);
  }
  static ValidationResult validate(File pdf) throws Exception {
    // By reflection: the other constructors name javax.activation types javac would need whole.
    PreflightParser parser = PreflightParser.class.getConstructor(File.class).newInstance(pdf);
    try {
      parser.parse();
      try (PreflightDocument doc = parser.getPreflightDocument()) { doc.validate(); return doc.getResult(); }
    } catch (SyntaxValidationException e) { return e.getResult(); }
  }
  /** The verdict on stdout; the exit code: 0 valid, 2 not. */
  static int report(ValidationResult result) {
    if (result.isValid()) System.out.println("VALID");
    // At most 50 lines of at most 300 characters (45 KB in UTF-8): an answer always fits the caller's 64 KB
    // window, so a warm validator's END line is never cut off (the service keeps 20 reasons).
    else for (ValidationResult.ValidationError e : result.getErrorsList().subList(0, Math.min(50, result.getErrorsList().size()))) {
      String line = (e.getErrorCode() + " " + e.getDetails()).replace('\\n', ' ');
      System.out.println(line.length() > 300 ? line.substring(0, 300) : line);
    }
    System.out.flush();
    return result.isValid() ? 0 : 2;
  }
}`,
  'PreflightServer.java': `
import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.File;
import java.io.FileOutputStream;
import java.io.OutputStream;
/**
 * A warm Preflight: validates the sample (args[0]) WARMUPS times, prints READY, then for each
 * PDF on stdin (a 4-byte big-endian length, then the bytes), written over args[1], answers as
 * Preflight does and prints "END <args[2]> <exit code>" (args[2]: a nonce no PDF knows, so the
 * caller need not wait for an exit). The caller sends the next PDF of the same scope, or closes
 * stdin: exit 0 at the end of input. Exit 3: the sample did not validate; 4: a short PDF.
 */
public class PreflightServer {
  static final int WARMUPS = ${WARMUPS};
  public static void main(String[] args) throws Exception {
    File sample = new File(args[0]);
    for (int i = 0; i < WARMUPS; i++) if (!Preflight.validate(sample).isValid()) System.exit(3);
    System.out.println("READY");
    System.out.flush();
    DataInputStream in = new DataInputStream(new BufferedInputStream(System.in, 1 << 16));
    File pdf = new File(args[1]);
    for (;;) {
      int left;
      try { left = in.readInt(); } catch (java.io.EOFException e) { System.exit(0); return; }
      try (OutputStream out = new FileOutputStream(pdf)) {
        byte[] buffer = new byte[1 << 16];
        while (left > 0) {
          int n = in.read(buffer, 0, Math.min(buffer.length, left));
          if (n < 0) System.exit(4);
          out.write(buffer, 0, n);
          left -= n;
        }
      }
      int code = Preflight.report(Preflight.validate(pdf));
      System.out.println("END " + args[2] + " " + code);
      System.out.flush();
    }
  }
}`,
  // In PDFBox's package: the font mapper's setProvider is public, its class package-private.
  'org/apache/pdfbox/pdmodel/font/NoSystemFonts.java': `
package org.apache.pdfbox.pdmodel.font;
/**
 * No system fonts: PDFBox otherwise scans every font of the system (and writes a cache into a
 * HOME the sandbox throws away) on its first font, about half a second. Preflight judges the
 * fonts a PDF embeds; a missing one is an error whatever would stand in for it.
 */
public final class NoSystemFonts extends FontProvider {
  public String toDebugString() { return "no system fonts"; }
  public java.util.List<? extends FontInfo> getFontInfo() { return java.util.Collections.emptyList(); }
  public static void install() { ((FontMapperImpl) FontMappers.instance()).setProvider(new NoSystemFonts()); }
}`,
  'javax/activation/DataSource.java': `
package javax.activation;
public interface DataSource {
  java.io.InputStream getInputStream() throws java.io.IOException;
  java.io.OutputStream getOutputStream() throws java.io.IOException;
  String getContentType();
  String getName();
}`,
  'javax/activation/FileDataSource.java': `
package javax.activation;
public class FileDataSource implements DataSource {
  private final java.io.File file;
  public FileDataSource(java.io.File file) { this.file = file; }
  public FileDataSource(String name) { this(new java.io.File(name)); }
  public java.io.File getFile() { return file; }
  public java.io.InputStream getInputStream() throws java.io.IOException { return new java.io.FileInputStream(file); }
  public java.io.OutputStream getOutputStream() throws java.io.IOException { throw new java.io.IOException("read only"); }
  public String getContentType() { return "application/pdf"; }
  public String getName() { return file.getName(); }
}`,
  'javax/xml/bind/DatatypeConverter.java': `
package javax.xml.bind;
public final class DatatypeConverter {
  private DatatypeConverter() {}
  public static int parseInt(String s) { return Integer.parseInt(s.trim()); }
  public static java.util.Calendar parseDateTime(String s) {
    try { return javax.xml.datatype.DatatypeFactory.newInstance().newXMLGregorianCalendar(s.trim()).toGregorianCalendar(); }
    catch (javax.xml.datatype.DatatypeConfigurationException e) { throw new IllegalArgumentException(e); }
  }
}`,
};

/** javac and jar start a JVM each: kept small, as the sandbox caps address space. */
const JAVAC_JVM = ['-J-XX:+UseSerialGC', '-J-Xss1m', '-J-Xmx512m', '-J-XX:ReservedCodeCacheSize=64m', '-J-XX:CompressedClassSpaceSize=64m', '-J-XX:MaxMetaspaceSize=256m'].join(' ');
const LIMITS = { cpuSeconds: 120, fileBytes: 64 * 1024 * 1024, memoryBytes: 4 * 1024 ** 3, processes: 64 };

let built: Promise<Buffer> | null = null;

/** The checker's jar, built on first use (about 2 s); rejects when javac or PDFBox is missing. */
export function preflightJar(): Promise<Buffer> {
  built ??= build().catch((err: unknown) => {
    built = null;
    throw err;
  });
  return built;
}

/** javac and jar inside the default TeX image's sandbox (its JDK and PDFBox); the jar comes back on stdout. */
async function build(): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'quire-preflight-'));
  try {
    await chmod(dir, 0o755);
    const files: string[] = [];
    for (const [name, text] of Object.entries(SOURCES)) {
      const path = join(dir, 'src', name);
      await mkdir(dirname(path), { recursive: true, mode: 0o755 });
      await writeFile(path, text, { mode: 0o644 });
      files.push(`src/${name}`);
    }
    const root = defaultImageRoot();
    const tools = root === undefined ? { javac: 'javac', jar: 'jar' } : { javac: `javac ${JAVAC_JVM}`, jar: `jar ${JAVAC_JVM}` };
    const script = `set -e; cp="$1"; shift; c=$(mktemp -d); ${tools.javac} -nowarn -d "$c" -cp "$cp" "$@"; ${tools.jar} cf "$c.jar" -C "$c" .; cat "$c.jar"`;
    const argv = ['sh', '-c', script, 'build', PDFBOX_CLASSPATH.join(':'), ...files];
    // With an image: the sandbox, its /tmp for the classes. Without (QUIRE_SANDBOX=off): the host's JDK.
    const command = sandboxed({ workspace: dir, root, isolate: root !== undefined, env: { LC_ALL: 'C.UTF-8', TMPDIR: '/tmp' }, limits: LIMITS }, argv);
    const run = promisify(execFile);
    const { stdout } = await run(command.file, command.args, { encoding: 'buffer', maxBuffer: 16 * 1024 * 1024, timeout: 120_000, ...(command.cwd ? { cwd: command.cwd } : {}), ...(command.env ? { env: command.env } : {}) });
    return stdout;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
