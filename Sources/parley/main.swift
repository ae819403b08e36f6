import Foundation
import ParleyServer

// parley: reads the configuration, opens the store, serves until SIGINT or SIGTERM.

let configuration: ParleyConfiguration
do {
    configuration = try ParleyConfiguration(environment: ProcessInfo.processInfo.environment,
                                            arguments: Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("parley: \(error)\n".utf8))
    exit(2)
}

let app: ParleyApp
do {
    app = try ParleyApp(configuration: configuration)
    try app.start()
} catch {
    FileHandle.standardError.write(Data("parley: cannot start: \(error)\n".utf8))
    exit(1)
}


// Handlers are in place before the `listening on` line, so a signal right after it is handled.
signal(SIGINT, SIG_IGN)
signal(SIGTERM, SIG_IGN)
signal(SIGPIPE, SIG_IGN)
let signals = [SIGINT, SIGTERM].map { number in
    let source = DispatchSource.makeSignalSource(signal: number, queue: .main)
    source.setEventHandler {
        FileHandle.standardError.write(Data("parley: shutting down\n".utf8))
        Task {
            await app.shutdown()
            exit(0)
        }
    }
    source.resume()
    return source
}
FileHandle.standardOutput.write(Data("listening on http://\(configuration.host):\(app.port)\n".utf8))
dispatchMain()
