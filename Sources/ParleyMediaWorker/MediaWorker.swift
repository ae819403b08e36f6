import CVips
import Foundation
import ParleyMedia

/// The child half, run by the `parley-media-worker` executable: one process per file, maybe started ahead as a spare. It
/// starts libvips, reads one `MediaRequest` (JSON) on stdin, sets its own rlimits before it opens the input, decodes with libvips or poppler,
/// writes its outputs into the request's directory and prints one `MediaReply` (JSON) on stdout.
/// Exit 0 with the result, 1 with a refusal; a crash or a kill by a limit leaves no reply, and the
/// parent (`MediaProcessor`) reports it. Decoders cannot be interrupted and may fault on hostile
/// files: in a child, neither can take the server down.
public enum MediaWorker {
    /// The request is written by the parent and small; more is not a request.
    static let maxRequestBytes = 64 << 10

    /// Runs the worker on this process's stdin and stdout; returns the exit status.
    public static func main() -> Int32 {
        // A spare (`SpareWorkers`) waits for its request, so what needs neither the request nor the
        // input is done first, off the upload's critical path: libvips' start (its modules) is
        // about 40 ms of CPU. Nothing here opens a file of the user's.
        let vipsReady = prepareVips()
        let reply: MediaReply
        do {
            reply = MediaReply(media: try run(vipsReady: vipsReady), error: nil)
        } catch {
            reply = MediaReply(media: nil, error: error)
        }
        let encoder = JSONEncoder()
        guard let line = try? encoder.encode(reply) else { return 2 }
        FileHandle.standardOutput.write(line + Data("\n".utf8))
        return reply.error == nil ? 0 : 1
    }

    private static func prepareVips() -> Bool {
        guard parley_vips_init() == 0 else { return false }
        // One file per process: no operation is worth caching. Loaders libvips marks untrusted
        // (ImageMagick, …) stay off even though the sniffer already chose among four formats.
        vips_cache_set_max(0)
        vips_block_untrusted_set(1)
        return true
    }

    private static func run(vipsReady: Bool) throws(MediaError) -> ProcessedMedia {
        let request = try readRequest()
        try WorkerLimits.apply(memoryBytes: request.memoryBytes, cpuSeconds: request.cpuSeconds,
                               outputMaxBytes: request.outputMaxBytes)
        switch request.format {
        case .png, .jpeg, .gif, .webp:
            guard vipsReady else { throw .unreadable(VipsImageHandle.lastError("libvips cannot start")) }
            return try ImageTranscoder(request: request).run(request.format)
        case .pdf:
            return try PDFExtractor(request: request).run()
        case .text(let mediaType):
            return try TextDocument(request: request).run(mediaType: mediaType)
        }
    }

    private static func readRequest() throws(MediaError) -> MediaRequest {
        var bytes = Data()
        while bytes.count <= maxRequestBytes {
            guard let piece = try? FileHandle.standardInput.read(upToCount: 4096), !piece.isEmpty else { break }
            bytes += piece
        }
        guard bytes.count <= maxRequestBytes, let request = try? JSONDecoder().decode(MediaRequest.self, from: bytes) else {
            throw .unreadable("the media worker got no valid request on stdin (run by Parley only)")
        }
        return request
    }
}
