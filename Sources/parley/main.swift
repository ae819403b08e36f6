import Foundation
import ParleyServer

// parley: reads the configuration, opens the store, serves until SIGINT or SIGTERM.

// Block the shutdown signals before any thread exists: every thread inherits the mask, so a signal
// sent at any moment (even right after the `listening on` line) stays pending until `sigwait` below.
var shutdownSignals = sigset_t()
sigemptyset(&shutdownSignals)
sigaddset(&shutdownSignals, SIGINT)
sigaddset(&shutdownSignals, SIGTERM)
pthread_sigmask(SIG_BLOCK, &shutdownSignals, nil)
signal(SIGPIPE, SIG_IGN)

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
} catch let error as StartupError {
    FileHandle.standardError.write(Data("parley: \(error)\n".utf8))
    exit(2)
} catch {
    FileHandle.standardError.write(Data("parley: cannot start: \(error)\n".utf8))
    exit(1)
}

FileHandle.standardOutput.write(Data("listening on http://\(configuration.host):\(app.port)\n".utf8))

var received: Int32 = 0
sigwait(&shutdownSignals, &received)
FileHandle.standardError.write(Data("parley: shutting down\n".utf8))
// Live replies are stored as `interrupted` with their text, open streams get their end, then exit.
let stopped = DispatchSemaphore(value: 0)
Task.detached { [app] in
    await app.shutdown()
    stopped.signal()
}
stopped.wait()
exit(0)
