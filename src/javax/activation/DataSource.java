package javax.activation;
public interface DataSource {
  java.io.InputStream getInputStream() throws java.io.IOException;
  java.io.OutputStream getOutputStream() throws java.io.IOException;
  String getContentType();
  String getName();
}
