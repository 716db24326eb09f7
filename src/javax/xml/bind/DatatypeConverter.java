package javax.xml.bind;
public final class DatatypeConverter {
  private DatatypeConverter() {}
  public static int parseInt(String s) { return Integer.parseInt(s.trim()); }
  public static java.util.Calendar parseDateTime(String s) {
    try { return javax.xml.datatype.DatatypeFactory.newInstance().newXMLGregorianCalendar(s.trim()).toGregorianCalendar(); }
    catch (javax.xml.datatype.DatatypeConfigurationException e) { throw new IllegalArgumentException(e); }
  }
}
