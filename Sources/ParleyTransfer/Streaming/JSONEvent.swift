/// One step of a JSON text as an incremental parser meets it (`JSONEventParser`). Strings and keys
/// arrive whole and already checked as UTF-8; numbers keep the text the document wrote.
enum JSONEvent: Equatable {
    case startObject
    case key(String)
    case endObject
    case startArray
    case endArray
    case string(String)
    case number(String)
    case bool(Bool)
    case null
}
