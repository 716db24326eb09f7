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
}
