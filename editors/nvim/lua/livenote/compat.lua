--- The few LSP client calls whose form differs between Neovim 0.10 and 0.11+, in one place.
--- 0.11 turned client functions into methods (`client:request(...)`); 0.10 only has the
--- function fields (`client.request(...)`), which 0.11 keeps but deprecates.
local M = {}

M.has_011 = vim.fn.has('nvim-0.11') == 1

--- Send a request to one client; the handler gets (err, result, ctx) with ctx.bufnr set.
---@param client vim.lsp.Client
---@param method string
---@param params table?
---@param handler fun(err: lsp.ResponseError?, result: any, ctx: lsp.HandlerContext)
---@param bufnr integer
---@return boolean sent false when the client is stopped (the handler is then never called)
function M.request(client, method, params, handler, bufnr)
  local ok
  if M.has_011 then
    ok = client:request(method, params, handler, bufnr)
  else
    ---@diagnostic disable-next-line: param-type-mismatch, missing-parameter
    ok = client.request(method, params, handler, bufnr)
  end
  return ok and true or false
end

---@param client vim.lsp.Client
---@param method string
---@param bufnr? integer
---@return boolean
function M.supports(client, method, bufnr)
  if M.has_011 then
    return client:supports_method(method, bufnr)
  end
  ---@diagnostic disable-next-line: missing-parameter
  return client.supports_method(method, { bufnr = bufnr })
end

--- Run a server command (workspace/executeCommand). On 0.11 through `client:exec_cmd`, which
--- also honours client-side command overrides (vim.lsp.commands); it never calls back when the
--- server does not advertise the command, so that case is answered here, as an error.
---@param client vim.lsp.Client
---@param bufnr integer
---@param command string
---@param arguments any[]
---@param handler fun(err: lsp.ResponseError?, result: any, ctx: lsp.HandlerContext?)
---@param direct? boolean send the request itself, past vim.lsp.commands (for a command the
---  plugin overrides there, which would otherwise take its own call back: livenote.ask)
function M.exec(client, bufnr, command, arguments, handler, direct)
  if not client.initialized then
    handler(
      { code = -32002, message = 'the livenote server is still starting; try again in a moment' },
      nil,
      nil
    )
    return
  end
  local provider = client.server_capabilities and client.server_capabilities.executeCommandProvider
  local known = type(provider) == 'table' and provider.commands or {}
  if not vim.tbl_contains(known, command) then
    handler({
      code = -32601,
      message = ('this livenote server (%s) does not offer the command %s; update livenote'):format(
        client.server_info and client.server_info.version or 'unknown version',
        command
      ),
    }, nil, nil)
    return
  end
  if M.has_011 and not direct then
    client:exec_cmd({ title = command, command = command, arguments = arguments }, { bufnr = bufnr }, handler)
  else
    M.request(
      client,
      'workspace/executeCommand',
      { command = command, arguments = arguments },
      handler,
      bufnr
    )
  end
end

--- Every live note the server knows, through the typed request `livenote/listNotes`; a server
--- older than that request answers "method not found", and is asked with the
--- `livenote.listNotes` command instead.
---@param client vim.lsp.Client
---@param bufnr integer
---@param handler fun(err: lsp.ResponseError?, result: any, ctx: lsp.HandlerContext?)
function M.list_notes(client, bufnr, handler)
  if not client.initialized then
    return M.exec(client, bufnr, 'livenote.listNotes', {}, handler)
  end
  local sent = M.request(client, 'livenote/listNotes', nil, function(err, result, ctx)
    if err and err.code == -32601 then
      return M.exec(client, bufnr, 'livenote.listNotes', {}, handler)
    end
    handler(err, result, ctx)
  end, bufnr)
  if not sent then
    handler({ code = -32803, message = 'the livenote server has stopped' }, nil, nil)
  end
end

return M
