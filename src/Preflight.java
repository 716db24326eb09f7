import java.io.File;
import org.apache.pdfbox.preflight.PreflightDocument;
import org.apache.pdfbox.preflight.ValidationResult;
import org.apache.pdfbox.preflight.parser.PreflightParser;
public class Preflight {
  public static void main(String[] args) throws Exception {
    PreflightParser parser = PreflightParser.class.getConstructor(File.class).newInstance(new File(args[0]));
    ValidationResult result;
    try {
      parser.parse();
      try (PreflightDocument doc = parser.getPreflightDocument()) { doc.validate(); result = doc.getResult(); }
    } catch (org.apache.pdfbox.preflight.exception.SyntaxValidationException e) { result = e.getResult(); }
    if (result.isValid()) { System.out.println("VALID"); return; }
    for (ValidationResult.ValidationError e : result.getErrorsList()) System.out.println(e.getErrorCode() + " " + e.getDetails());
    System.exit(2);
  }
}
