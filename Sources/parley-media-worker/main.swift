import Foundation
import ParleyMediaWorker

// parley-media-worker: the child `parley` starts to decode one uploaded image or PDF (see `MediaWorker`).
// It is its own executable so that the server links neither libvips nor poppler. It reads no
// configuration and no arguments: its request and limits come on stdin, and it sets its own rlimits
// before it opens the input. Nothing of the server runs first: no store, no thread.
exit(MediaWorker.main())
