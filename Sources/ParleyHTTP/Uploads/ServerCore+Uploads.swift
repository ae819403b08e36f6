import CMicroHTTPD
import Foundation

// MARK: - Upload routes (the body streams to a temp file; see `UploadRoute`)

extension ServerCore {
    /// At headers time, for a method that has upload routes or routes with their own body limit: looks
    /// the route up once (kept in the context for the final call) and returns it if it is an upload route.
    func uploadRoute(for context: RequestContext, method: String)
        -> (route: UploadRoute, parameters: [String: String])? {
        let target = RequestTarget(raw: context.rawTarget)
        context.target = target
        guard !target.isMalformed else { return nil }
        let match = router.match(method: method, segments: target.segments)
        context.match = match
        guard case .handler(.upload(let route), let parameters) = match else { return nil }
        return (route, parameters)
    }

    /// Everything an upload can be refused for before its body is read, in order: the route's own
    /// `admit` (sign-in, quota), a declared length over the limit, no free upload slot. Then its temp
    /// file is made and the body starts flowing to it. A refusal closes the connection.
    func beginUpload(
        _ route: UploadRoute, parameters: [String: String], method: String, connection: OpaquePointer,
        context: RequestContext
    ) -> MHD_Result {
        func refuse(_ error: HTTPError) -> MHD_Result {
            context.phase = .refused
            return queue(Self.closing(error.response), on: connection, context: context)
        }
        guard let target = context.target else { return refuse(.internal) }
        var request = context.makeRequest(method: method, target: target, remoteAddress: remoteAddress(of: connection))
        request.parameters = parameters
        if let refusal = route.admit(request) { return refuse(refusal) }

        let multipart = request.header("content-type").map(Self.isMultipart) ?? false
        let limit = route.maxBytes + (multipart ? UploadRoute.multipartAllowance : 0)
        if let declared = request.header("content-length"), let length = Int(declared), length > limit {
            return refuse(.payloadTooLarge)
        }
        guard let directory = uploadDirectory else { return refuse(.serviceUnavailable) }
        guard uploadSlots.acquire() else { return refuse(.uploadsBusy) }
        guard let (fd, file) = directory.makeFile() else {
            let error = errno
            uploadSlots.release()
            ServerCore.log("cannot make an upload file in \(directory.path): \(String(cString: strerror(error)))")
            return refuse(error == ENOSPC || error == EDQUOT ? .insufficientStorage : .internal)
        }
        let lease = UploadLease(file: file, slots: uploadSlots)
        guard let receiver = UploadReceiver(
            route: route, request: request, lease: lease, fd: fd, multipart: multipart ? connection : nil,
            discardLimit: configuration.discardLimit)
        else {
            // The post processor refused the Content-Type (no boundary).
            return refuse(.invalidMultipart)
        }
        context.phase = .receivingUpload(receiver)
        if let entry = connectionEntry(connection) { connections.receivingUpload(entry, true) }
        return MHD_Result.YES
    }

    /// The body has ended: the handler runs with the file, which is deleted once it returns; or the
    /// upload's error is answered and the connection closed.
    func finishUpload(_ receiver: UploadReceiver, connection: OpaquePointer, context: RequestContext) -> MHD_Result {
        if let entry = connectionEntry(connection) { connections.receivingUpload(entry, false) }
        switch receiver.finish() {
        case .refused(let error):
            context.phase = .refused
            return queue(Self.closing(error.response), on: connection, context: context)
        case .accepted(let body, let lease):
            context.phase = .routed
            let route = receiver.route
            let request = receiver.request
            // Refused at shutdown, the task never runs: the lease goes with the closure (its deinit).
            return runSuspended(request, on: connection, context: context) { request in
                defer { lease.end() }
                return try await route.handler(request, body)
            }
        }
    }

    /// `multipart/form-data` (any case, with parameters); every other type is a raw body.
    private static func isMultipart(_ contentType: String) -> Bool {
        contentType.lowercased().hasPrefix("multipart/form-data")
    }
}
