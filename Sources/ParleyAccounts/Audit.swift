import Foundation
import ParleyAPI

/// One structured line on stderr per security event (sign-in, sign-out, tokens, accounts), for
/// whoever watches the logs. Fields are names and addresses, never secrets.
package enum Audit {
    package static func record(_ event: String, _ fields: KeyValuePairs<String, String> = [:]) {
        var writer = JSONWriter()
        writer.object { line in
            line.field("audit", event)
            for (name, value) in fields { line.field(name, value) }
        }
        FileHandle.standardError.write(Data((writer.text + "\n").utf8))
    }
}
