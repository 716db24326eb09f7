// The Java side of the PDF/A-1b check: a small main class over Apache PDFBox Preflight
// (Debian libpdfbox2-java), compiled once per process with the host's javac. Debian's
// preflight jar links javax.activation and javax.xml.bind, which Java 17 no longer ships;
// the two stand-ins below give it the few members it calls. The jar is copied into the
// job's workspace and run in the sandbox (preflight.ts).
import { execFile } from 'node:child_process';
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

/** Debian's PDFBox 2 jars (libpdfbox2-java), on the sandbox's read-only /usr. */
export const PDFBOX_CLASSPATH = ['preflight', 'pdfbox2', 'xmpbox', 'fontbox2', 'commons-logging'].map((jar) => `/usr/share/java/${jar}.jar`);

const SOURCES: Record<string, string> = {
  'Preflight.java': `
import java.io.File;
import org.apache.pdfbox.preflight.PreflightDocument;
import org.apache.pdfbox.preflight.ValidationResult;
import org.apache.pdfbox.preflight.exception.SyntaxValidationException;
import org.apache.pdfbox.preflight.parser.PreflightParser;
/** Prints VALID, or one line per error (code and details) and exits 2. */
public class Preflight {
  public static void main(String[] args) throws Exception {
    // By reflection: the other constructors name javax.activation types javac would need whole.
    PreflightParser parser = PreflightParser.class.getConstructor(File.class).newInstance(new File(args[0]));
    ValidationResult result;
    try {
      parser.parse();
      try (PreflightDocument doc = parser.getPreflightDocument()) { doc.validate(); result = doc.getResult(); }
    } catch (SyntaxValidationException e) { result = e.getResult(); }
    if (result.isValid()) { System.out.println("VALID"); return; }
    for (ValidationResult.ValidationError e : result.getErrorsList()) System.out.println(e.getErrorCode() + " " + e.getDetails());
    System.exit(2);
  }
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

let built: Promise<Buffer> | null = null;

/** The checker's jar, built on first use (about 2 s); rejects when javac or PDFBox is missing. */
export function preflightJar(): Promise<Buffer> {
  built ??= build().catch((err: unknown) => {
    built = null;
    throw err;
  });
  return built;
}

async function build(): Promise<Buffer> {
  const run = promisify(execFile);
  const dir = await mkdtemp(join(tmpdir(), 'quire-preflight-'));
  try {
    const files: string[] = [];
    for (const [name, text] of Object.entries(SOURCES)) {
      const path = join(dir, 'src', name);
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, text);
      files.push(path);
    }
    await run('javac', ['-nowarn', '-d', join(dir, 'classes'), '-cp', PDFBOX_CLASSPATH.join(':'), ...files]);
    await run('jar', ['cf', join(dir, 'preflight.jar'), '-C', join(dir, 'classes'), '.']);
    return await readFile(join(dir, 'preflight.jar'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
