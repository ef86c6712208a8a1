//! The JSON-RPC errors the handlers answer with, by what went wrong, so that a client can tell
//! its own mistake from a request that could not be done: the parameters do not fit (-32602,
//! `InvalidParams`: the caller should not send it again as it is); the request was fine but
//! failed here and now, the note being updated, a file gone or a folder refused (-32803,
//! LSP 3.17's `RequestFailed`: it may work later); the server's own failure (-32603).

use tower_lsp_server::jsonrpc::{Error, ErrorCode};

/// LSP 3.17 `RequestFailed`.
pub const REQUEST_FAILED: i64 = -32803;

/// The request's parameters do not fit.
pub fn bad_params(e: impl std::fmt::Display) -> Error {
    Error::invalid_params(e.to_string())
}

/// A well-formed request that could not be done now: the note is updating, its file is gone,
/// the store refused a write.
pub fn failed(e: impl std::fmt::Display) -> Error {
    Error { code: ErrorCode::ServerError(REQUEST_FAILED), message: e.to_string().into(), data: None }
}

/// The server's own failure (an answer that would not serialise).
pub fn internal(e: impl std::fmt::Display) -> Error {
    Error { code: ErrorCode::InternalError, message: e.to_string().into(), data: None }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_of_failure_has_its_code() {
        assert_eq!(bad_params("x").code.code(), -32602);
        assert_eq!(failed("x").code.code(), -32803);
        assert_eq!(internal("x").code.code(), -32603);
    }
}
