import Foundation
import ParleyCLI
import ParleyServer

// parley: runs the command the arguments name (`parley` alone serves); see `ParleyCommand`.

func printError(_ line: String) {
    FileHandle.standardError.write(Data("parley: \(line)\n".utf8))
}

/// Reads the configuration, opens the store, serves until SIGINT or SIGTERM.
func serve(_ configuration: ParleyConfiguration) -> Never {
    // Block the shutdown signals before any thread exists: every thread inherits the mask, so a signal
    // sent at any moment (even right after the `listening on` line) stays pending until `sigwait` below.
    var shutdownSignals = sigset_t()
    sigemptyset(&shutdownSignals)
    sigaddset(&shutdownSignals, SIGINT)
    sigaddset(&shutdownSignals, SIGTERM)
    pthread_sigmask(SIG_BLOCK, &shutdownSignals, nil)
    signal(SIGPIPE, SIG_IGN)

    let app: ParleyApp
    do {
        app = try ParleyApp(configuration: configuration)
        try app.start()
    } catch let error as StartupError {
        printError("\(error)")
        exit(2)
    } catch {
        printError("cannot start: \(error)\(StartupHint.forError(error))")
        exit(1)
    }

    FileHandle.standardOutput.write(Data("listening on http://\(configuration.host):\(app.port)\n".utf8))
    printError("store: \(app.store.engineDescription)")
    printError("nodes: \(app.sharingDescription)")

    var received: Int32 = 0
    sigwait(&shutdownSignals, &received)
    printError("shutting down")
    // Live replies are stored as `interrupted` with their text, open streams get their end, then exit.
    let stopped = DispatchSemaphore(value: 0)
    Task.detached { [app] in
        await app.shutdown()
        stopped.signal()
    }
    stopped.wait()
    exit(0)
}

/// Exit 0 if the server configured here answers /api/health (Docker's HEALTHCHECK), 1 otherwise.
func healthcheck(_ configuration: ParleyConfiguration) -> Never {
    signal(SIGPIPE, SIG_IGN)
    if let problem = HealthCheck.runBlocking(configuration) {
        printError("unhealthy: \(problem)")
        exit(1)
    }
    exit(0)
}

/// Writes a consistent copy of PARLEY_DB to `destination`, beside a running server.
func backup(_ configuration: ParleyConfiguration, to destination: String, replacing: Bool) -> Never {
    let (status, message) = BackupCommand.run(configuration, destination: destination, replacing: replacing)
    if status == 0 {
        FileHandle.standardOutput.write(Data("\(message)\n".utf8))
    } else {
        printError(message)
    }
    exit(status)
}

/// `parley user …` on PARLEY_DB: prints what it did; bad use (unknown user, taken name) exits 2.
func user(_ configuration: ParleyConfiguration, _ command: UserCommand) -> Never {
    do {
        let lines = try UserCommand.Runner(configuration: configuration).run(command) { readLine(strippingNewline: true) }
        FileHandle.standardOutput.write(Data(lines.map { $0 + "\n" }.joined().utf8))
        exit(0)
    } catch let error as UserCommand.UsageError {
        printError("\(error)")
        exit(2)
    } catch {
        printError("\(error)")
        exit(1)
    }
}

/// `parley migrate …`: prints one line per table copied; bad use exits 2, a failed copy 1.
func migrate(_ command: MigrateCommand) -> Never {
    let (status, lines) = command.run()
    if status == 0 {
        FileHandle.standardOutput.write(Data(lines.map { $0 + "\n" }.joined().utf8))
    } else {
        lines.forEach(printError)
    }
    exit(status)
}

let command: ParleyCommand
do {
    command = try ParleyCommand(environment: ProcessInfo.processInfo.environment,
                                arguments: Array(CommandLine.arguments.dropFirst()))
} catch {
    printError("\(error)")
    exit(2)
}

switch command {
case .serve(let configuration): serve(configuration)
case .healthcheck(let configuration): healthcheck(configuration)
case .backup(let configuration, let destination, let replacing): backup(configuration, to: destination, replacing: replacing)
case .user(let configuration, let command): user(configuration, command)
case .migrate(let command): migrate(command)
}
