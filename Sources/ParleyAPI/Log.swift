import Foundation

/// Log lines go to standard error; standard output carries only the `listening on` line.
package enum Log {
    package static func info(_ message: String) {
        FileHandle.standardError.write(Data("parley: \(message)\n".utf8))
    }
}
