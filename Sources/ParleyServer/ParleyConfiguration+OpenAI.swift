extension ParleyConfiguration {
    /// POST /v1/chat/completions' body limit: PARLEY_OPENAI_MAX_BODY_BYTES, by default room for one
    /// file of PARLEY_MAX_FILE_BYTES as base64 (4/3 of it) on top of the API's body limit
    /// (PARLEY_MAX_BODY_BYTES), so whatever `POST /api/files` takes can also be sent inline. The body is
    /// held in memory, as every JSON body is: more or larger files go through `/api/files` and `file_id`.
    public var openAIBodyLimit: Int {
        openAIMaxBodyBytes ?? (maxFileBytes + 2) / 3 * 4 + http.maxBodyBytes
    }
}
