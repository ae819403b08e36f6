import Foundation

/// One structured line on stderr per security event (sign-in, sign-out, tokens, accounts), for
/// whoever watches the logs. Fields are names and addresses, never secrets.
enum Audit {
    static func record(_ event: String, _ fields: KeyValuePairs<String, String> = [:]) {
        var line = "{\"audit\":" + quoted(event)
        for (name, value) in fields {
            line += "," + quoted(name) + ":" + quoted(value)
        }
        FileHandle.standardError.write(Data((line + "}\n").utf8))
    }

    private static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
