import Foundation

/// Every limit of the media pipeline in one value, so each is explicit, configurable and tested.
/// The server reads them from `PARLEY_*` variables; tests build them with the memberwise init.
/// Defaults: the contract of issue 21 (`imageMaxBytes` is Anthropic's 5 MiB once base64-encoded).
public struct MediaSettings: Sendable, Equatable {
    /// Long edge, in pixels, an image is downscaled to (PARLEY_IMAGE_MAX_EDGE).
    public var imageMaxEdge: Int
    /// Width x height x frames past which an image is refused before decoding (PARLEY_IMAGE_MAX_PIXELS).
    public var imageMaxPixels: Int
    /// Encoded size a stored image must fit; larger is re-encoded smaller (PARLEY_IMAGE_MAX_BYTES).
    public var imageMaxBytes: Int
    /// Pages past which a PDF is refused (PARLEY_PDF_MAX_PAGES).
    public var pdfMaxPages: Int
    /// Wall-clock time a worker may take before it is killed with SIGKILL (PARLEY_MEDIA_TIMEOUT).
    public var timeout: Duration
    /// Workers running at once (PARLEY_MEDIA_WORKERS).
    public var workers: Int
    /// Files that may wait for a worker; past it `process` throws `.busy` (PARLEY_MEDIA_QUEUE).
    public var queue: Int
    /// Workers started ahead, each waiting for its one file (PARLEY_MEDIA_SPARES; 0: start on demand).
    public var spares: Int
    /// The worker's address space, RLIMIT_AS (PARLEY_MEDIA_MEMORY_BYTES).
    public var memoryBytes: Int
    /// The largest file a worker may write (RLIMIT_FSIZE): bounds extracted text and re-encodes.
    public var outputMaxBytes: Int
    /// The `parley-media-worker` executable each child runs (PARLEY_MEDIA_WORKER; default: the one beside
    /// the running binary). A separate executable so that `parley` itself links no decoder.
    public var workerExecutable: URL
    /// Where each call's fresh output directory is made.
    public var scratchDirectory: URL

    public init(imageMaxEdge: Int = 2048, imageMaxPixels: Int = 50_000_000, imageMaxBytes: Int = 3_932_160,
                pdfMaxPages: Int = 500, timeout: Duration = .seconds(30), workers: Int = 2, queue: Int = 16,
                spares: Int = 1, memoryBytes: Int = 1 << 30, outputMaxBytes: Int = 64 << 20,
                workerExecutable: URL = MediaSettings.besideRunningExecutable,
                scratchDirectory: URL = FileManager.default.temporaryDirectory) {
        self.imageMaxEdge = imageMaxEdge
        self.imageMaxPixels = imageMaxPixels
        self.imageMaxBytes = imageMaxBytes
        self.pdfMaxPages = pdfMaxPages
        self.timeout = timeout
        self.workers = workers
        self.queue = queue
        self.spares = spares
        self.memoryBytes = memoryBytes
        self.outputMaxBytes = outputMaxBytes
        self.workerExecutable = workerExecutable
        self.scratchDirectory = scratchDirectory
    }

    /// The worker executable's file name.
    public static let workerName = "parley-media-worker"

    /// `parley-media-worker` in the directory of the running binary: beside `parley` in `.build/release`,
    /// in the Docker image, or wherever both are installed.
    public static var besideRunningExecutable: URL {
        runningExecutable().deletingLastPathComponent().appendingPathComponent(workerName)
    }

    /// The running binary: `/proc/self/exe`, or without /proc (a bare chroot) the path it was started
    /// by (`argument0` with a slash, else the first executable of that name on `searchPath`).
    package static func runningExecutable(procLink: String = "/proc/self/exe",
                                  argument0: String = CommandLine.arguments.first ?? "parley",
                                  searchPath: String = ProcessInfo.processInfo.environment["PATH"] ?? "") -> URL {
        if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: procLink), target.hasPrefix("/") {
            return URL(fileURLWithPath: target)
        }
        if argument0.contains("/") {
            return URL(fileURLWithPath: argument0).standardizedFileURL.resolvingSymlinksInPath()
        }
        for directory in searchPath.split(separator: ":") where !directory.isEmpty {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent(argument0)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate.resolvingSymlinksInPath() }
        }
        return URL(fileURLWithPath: argument0).standardizedFileURL
    }

    /// Why `workerExecutable` cannot be run (missing, a directory, not executable), or nil when it can.
    /// The server checks it at start, so a missing worker is a clear startup error, not a failed upload.
    public func workerProblem() -> String? {
        let path = workerExecutable.path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            return "the media worker \(path) does not exist"
        }
        if isDirectory.boolValue { return "the media worker \(path) is a directory" }
        guard FileManager.default.isExecutableFile(atPath: path) else {
            return "the media worker \(path) is not executable"
        }
        return nil
    }

    /// The first setting out of range, named as its variable, or nil when all are usable.
    public func validate() -> String? {
        if imageMaxEdge < 16 { return "PARLEY_IMAGE_MAX_EDGE must be at least 16 (got \(imageMaxEdge))" }
        if imageMaxPixels < 1 { return "PARLEY_IMAGE_MAX_PIXELS must be at least 1 (got \(imageMaxPixels))" }
        if imageMaxBytes < 4096 { return "PARLEY_IMAGE_MAX_BYTES must be at least 4096 (got \(imageMaxBytes))" }
        if pdfMaxPages < 1 { return "PARLEY_PDF_MAX_PAGES must be at least 1 (got \(pdfMaxPages))" }
        if timeout <= .zero { return "PARLEY_MEDIA_TIMEOUT must be positive" }
        if workers < 1 { return "PARLEY_MEDIA_WORKERS must be at least 1 (got \(workers))" }
        if queue < 0 { return "PARLEY_MEDIA_QUEUE must not be negative (got \(queue))" }
        if spares < 0 || spares > workers {
            return "PARLEY_MEDIA_SPARES must be between 0 and PARLEY_MEDIA_WORKERS (\(workers)) (got \(spares))"
        }
        // The worker maps libvips, poppler and their dependencies before a decode: leave room for them.
        if memoryBytes < 256 << 20 { return "PARLEY_MEDIA_MEMORY_BYTES must be at least 256 MiB (got \(memoryBytes))" }
        if outputMaxBytes < 1 << 20 { return "the media output limit must be at least 1 MiB (got \(outputMaxBytes))" }
        return nil
    }
}
