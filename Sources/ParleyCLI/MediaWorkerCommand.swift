import Foundation
import ParleyMedia

/// `parley media-worker`: hands the process to `MediaWorker` before anything of the server exists
/// (no configuration read, no store opened, no thread started), so a decoder runs in a bare child.
public enum MediaWorkerCommand {
    public static func run() -> Never {
        exit(MediaWorker.main())
    }
}
