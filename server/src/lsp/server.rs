//! `impl LanguageServer`: one-line delegations to the handler modules (`lifecycle`,
//! `notifications`, `requests`, `commands`), plus the wiring of the
//! background tasks started at `initialized`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer};

use super::state::{Options, State};
use super::{commands, lifecycle, notifications, requests};

pub struct Backend {
    pub(super) client: Client,
    pub(super) state: Arc<State>,
    /// Set by `shutdown`: the exit status of `livenote lsp` depends on it.
    shut_down: Arc<AtomicBool>,
}

impl Backend {
    pub fn new(client: Client, opts: Options) -> Self {
        Backend { client, state: Arc::new(State::new(opts)), shut_down: Arc::default() }
    }

    /// Whether the client asked the server to shut down (set before `exit` arrives).
    pub(super) fn shutdown_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.shut_down)
    }

    /// `window/workDoneProgress/cancel` (not in tower-lsp-server's trait): cancelling a run's
    /// progress stops the run.
    pub async fn progress_cancel(&self, params: WorkDoneProgressCancelParams) {
        notifications::progress_cancel(&self.state, params);
    }

    /// `livenote/documentText`: the server's copy of an open document and its version, so
    /// tests and bug reports can check that edits were applied in order.
    pub async fn document_text(&self, params: TextDocumentIdentifier) -> Result<Option<serde_json::Value>> {
        Ok(super::custom::document_text(&self.state, &params.uri))
    }

    /// `livenote/listNotes` (no parameters; `{}` and `[]` too, through `framing`).
    pub async fn list_notes(&self) -> Result<serde_json::Value> {
        Ok(super::custom::list_notes(&self.state))
    }

    /// `livenote/noteStatus` (`{"textDocument": {"uri": ...}}`; without a document, `null`).
    pub async fn note_status(
        &self,
        params: super::custom::NoteStatusParams,
    ) -> Result<Option<super::custom::NoteStatus>> {
        match params.text_document {
            Some(doc) => super::custom::note_status(&self.state, &doc.uri).map(Some),
            None if params.rest.is_empty() => Ok(None),
            None => {
                Err(super::errors::bad_params("livenote/noteStatus takes {\"textDocument\": {\"uri\": ...}}"))
            }
        }
    }

    /// `livenote/noteHistory` (`{"uri": ...}`): the note's runs, newest first.
    pub async fn note_history(
        &self,
        params: super::custom::RunParams,
    ) -> Result<Vec<crate::runs::history::RunInfo>> {
        super::custom::note_history(&self.state, &params)
    }

    /// `livenote/runDiff` (`{"uri": ..., "run": ...}`): the body before and after the run.
    pub async fn run_diff(&self, params: super::custom::RunParams) -> Result<super::custom::RunDiff> {
        super::custom::run_diff(&self.state, &params)
    }

    /// `livenote/restoreRun` (`{"uri": ..., "run": ..., "force": false}`).
    pub async fn restore_run(&self, params: super::custom::RunParams) -> Result<Option<()>> {
        super::custom::restore_run(&self.client, &self.state, params)
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        Ok(lifecycle::initialize(&self.state, params))
    }

    async fn initialized(&self, _: InitializedParams) {
        lifecycle::initialized(&self.client, &self.state);
    }

    async fn shutdown(&self) -> Result<()> {
        self.shut_down.store(true, Ordering::SeqCst);
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        notifications::did_open(&self.client, &self.state, params);
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        notifications::did_change(&self.state, params);
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        notifications::did_close(&self.state, params);
    }

    async fn did_save(&self, params: DidSaveTextDocumentParams) {
        notifications::did_save(&self.client, &self.state, params);
    }

    async fn did_rename_files(&self, params: RenameFilesParams) {
        notifications::did_rename_files(&self.state, params);
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        notifications::did_change_configuration(&self.client, &self.state, params);
    }

    async fn did_change_watched_files(&self, params: DidChangeWatchedFilesParams) {
        notifications::did_change_watched_files(&self.client, &self.state, params);
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        Ok(requests::completion(&self.state, params))
    }

    async fn completion_resolve(&self, params: CompletionItem) -> Result<CompletionItem> {
        Ok(requests::completion_resolve(&self.state, params))
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        Ok(requests::hover(&self.state, params))
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        Ok(requests::code_action(&self.state, params))
    }

    async fn code_lens(&self, params: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        Ok(requests::code_lens(&self.state, params))
    }

    async fn inlay_hint(&self, params: InlayHintParams) -> Result<Option<Vec<InlayHint>>> {
        Ok(requests::inlay_hint(&self.state, params))
    }

    async fn goto_definition(&self, params: GotoDefinitionParams) -> Result<Option<GotoDefinitionResponse>> {
        Ok(requests::definition(&self.state, params))
    }

    async fn symbol(&self, params: WorkspaceSymbolParams) -> Result<Option<WorkspaceSymbolResponse>> {
        requests::first_index(&self.state).await;
        Ok(Some(requests::symbol(&self.state, params)))
    }

    async fn diagnostic(&self, params: DocumentDiagnosticParams) -> Result<DocumentDiagnosticReportResult> {
        Ok(requests::document_diagnostic(&self.state, params))
    }

    async fn workspace_diagnostic(
        &self,
        params: WorkspaceDiagnosticParams,
    ) -> Result<WorkspaceDiagnosticReportResult> {
        Ok(requests::workspace_diagnostic(&self.state, params))
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<LSPAny>> {
        if params.command == crate::ide::commands::ASK {
            return super::ask::execute(&self.client, &self.state, &params.arguments).await;
        }
        commands::execute_command(&self.client, &self.state, params)
    }
}
