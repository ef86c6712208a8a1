--- Ask livenote (issue 33): one sentence about a note ("keep an eye on the pollen count too",
--- "why did it not run this morning?") goes to the server's `livenote.ask`, whose configured
--- model acts on the note or answers; the reply is shown with vim.notify. The note's changes
--- reach the buffer as the server's own edit. `:LiveAsk [sentence]` asks with vim.ui.input when
--- the sentence is missing, and so does the server's "Ask livenote…" code action, whose
--- command carries the note only: vim.lsp.commands['livenote.ask'] takes it here.
---
--- And the server's word when a note changes: `livenote/notify` shown with vim.notify (WARN when
--- a run failed).
local compat = require('livenote.compat')

local M = {}

M.COMMAND = 'livenote.ask'
M.NOTIFY = 'livenote/notify'

local levels = vim.log.levels

local function notify(msg, level)
  require('livenote').notify(msg, level)
end

--- Show what `livenote.ask` answered: the reply, as a warning when no model is configured (the
--- reply then says how to set one up and what to run instead).
---@param result any
function M.show(result)
  if type(result) ~= 'table' or type(result.reply) ~= 'string' then
    notify('Ask: the server gave no reply', levels.WARN)
    return
  end
  notify(result.reply, result.noModel == true and levels.WARN or levels.INFO)
end

--- Send `[uri, sentence]` to the client's server and show the reply.
---@param client vim.lsp.Client
---@param bufnr integer
---@param uri string
---@param sentence string
---@param on_done? fun(err: lsp.ResponseError?, result: any)
function M.send(client, bufnr, uri, sentence, on_done)
  notify('asking about ' .. vim.fn.fnamemodify(vim.uri_to_fname(uri), ':t') .. '…')
  -- Past vim.lsp.commands: the override below would take this call back.
  compat.exec(client, bufnr, M.COMMAND, { uri, sentence }, function(err, result)
    if err then
      local msg = type(err) == 'table' and (err.message or vim.inspect(err)) or tostring(err)
      notify('Ask failed: ' .. msg, levels.ERROR)
    else
      M.show(result)
    end
    if vim.api.nvim_buf_is_valid(bufnr) then
      require('livenote.lens').schedule(bufnr, 200)
    end
    if on_done then
      on_done(err, result)
    end
  end, true)
end

--- The sentence from vim.ui.input; `on_sentence` is not called when the user cancels or
--- answers nothing.
---@param name string the note's file name, for the prompt
---@param on_sentence fun(sentence: string)
function M.prompt(name, on_sentence)
  vim.ui.input({ prompt = ('Ask livenote about %s: '):format(name) }, function(answer)
    -- vim.ui.input may answer from a prompt's callback, outside the main loop's safe points.
    vim.schedule(function()
      local sentence = answer and vim.trim(answer) or ''
      if sentence ~= '' then
        on_sentence(sentence)
      end
    end)
  end)
end

--- `:LiveAsk [sentence]` on a buffer whose livenote client is `client`.
---@param client vim.lsp.Client
---@param bufnr integer
---@param sentence? string
function M.ask(client, bufnr, sentence)
  local uri = vim.uri_from_bufnr(bufnr)
  if sentence and vim.trim(sentence) ~= '' then
    return M.send(client, bufnr, uri, vim.trim(sentence))
  end
  M.prompt(vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ':t'), function(s)
    M.send(client, bufnr, uri, s)
  end)
end

--- vim.lsp.commands['livenote.ask']: the code action's `{ noteUri }` (a client that can prompt
--- declares `experimental.livenote.ask`, and the server offers "Ask livenote…" to it) asks for
--- the sentence; a call that already has one is sent as it is.
---@param command lsp.Command
---@param ctx { bufnr?: integer, client_id?: integer }
function M.on_command(command, ctx)
  local args = command.arguments or {}
  local uri = args[1]
  local client = ctx and ctx.client_id and vim.lsp.get_client_by_id(ctx.client_id)
  if type(uri) ~= 'string' or not client then
    notify('Ask: the code action named no note', levels.WARN)
    return
  end
  local bufnr = vim.uri_to_bufnr(uri)
  if type(args[2]) == 'string' and vim.trim(args[2]) ~= '' then
    return M.send(client, bufnr, uri, args[2])
  end
  M.prompt(vim.fn.fnamemodify(vim.uri_to_fname(uri), ':t'), function(s)
    M.send(client, bufnr, uri, s)
  end)
end

--- The `livenote/notify` handler: `message` is one line ready to show ("Weather changed: 3
--- lines added", "5 notes changed"); a failed run among the notes makes it a warning.
---@param _ any
---@param params any
function M.on_notify(_, params)
  if type(params) ~= 'table' or type(params.message) ~= 'string' or params.message == '' then
    return vim.NIL
  end
  local failed = false
  for _, n in ipairs(type(params.notes) == 'table' and params.notes or {}) do
    if type(n) == 'table' and n.outcome == 'failed' then
      failed = true
    end
  end
  notify(params.message, failed and levels.WARN or levels.INFO)
  return vim.NIL
end

return M
