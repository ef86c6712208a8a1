-- End-to-end test of the README's Neovim setup (init.lua beside this file) against the real
-- `livenote lsp`, headless, as a new user would use it: diagnostics, completion, "Make live"
-- (from the code-action menu and as a command) and the status lens, plus inlay hints.
--
--   nvim --headless --clean -u tests/e2e/nvim/init.lua -l tests/e2e/nvim/test.lua
--
-- LIVENOTE_BIN: the server binary (default: `livenote` on PATH, as in the README).
-- Prints one line per check and a closing "N passed, N failed" line; exits 0 when every check
-- passed, 1 when one failed, 2 on the overall timeout. `server/tests/nvim.rs` runs it.

-- The harness shared with plugin_test.lua (watchdog, messages and prompts, check, wait_for, open,
-- the LSP log on failure), loaded from beside this file.
local here = vim.fn.fnamemodify(arg[0], ':p:h')
local H = dofile(here .. '/harness.lua')
local check, wait_for, open, client_of = H.check, H.wait_for, H.open, H.client_of
local lines, text, count_lines = H.lines, H.text, H.count_lines
local lens_titles, find_lens = H.lens_titles, H.find_lens
local notes = H.notes

-- Requests the server sends to the editor, by method (refreshes must not come in floods).
local from_server = {} ---@type table<string, integer>
for _, method in ipairs({ 'workspace/inlayHint/refresh', 'workspace/codeLens/refresh' }) do
  local default = vim.lsp.handlers[method]
  vim.lsp.handlers[method] = function(...)
    from_server[method] = (from_server[method] or 0) + 1
    if default then
      return default(...)
    end
    return vim.NIL
  end
end

-- The server binary under test, a new user's (empty) trust list kept out of the real one, and
-- the server's exit status; the rest of the configuration is init.lua's, untouched.
vim.lsp.config('livenote', {
  cmd = vim.env.LIVENOTE_BIN and { vim.env.LIVENOTE_BIN, 'lsp' } or nil,
  cmd_env = { LIVENOTE_DATA_DIR = vim.fn.tempname() .. '-data' },
  on_exit = H.on_exit,
})

-- A scratch copy of the fixture workspace (removed when Nvim exits).
local ws = H.copy_workspace(here .. '/workspace')
vim.fn.writefile({ '# Errands', '', '- post office' }, ws .. '/errands.md')

-------------------------------------------------------------------------------------------------
-- Helpers (the shared ones are in harness.lua)

--- The labels a completion request at (line, character), 0-based, offers.
local function completion_labels(buf, line, character)
  local client = assert(client_of(buf), 'livenote is not attached')
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    position = { line = line, character = character },
    context = { triggerKind = 1 },
  }
  local resp = vim.lsp.buf_request_sync(buf, 'textDocument/completion', params, H.WAIT_MS)
  local r = resp and resp[client.id]
  if not r then
    error('no answer to textDocument/completion within ' .. H.WAIT_MS .. ' ms', 0)
  elseif r.err then
    error('textDocument/completion failed: ' .. vim.inspect(r.err), 0)
  end
  local items = r.result and (r.result.items or r.result) or {}
  local labels, by_label = {}, {}
  for _, item in ipairs(items) do
    table.insert(labels, item.label)
    by_label[item.label] = item
  end
  return labels, by_label
end

--- Run a server command as Nvim runs a lens's or an action's command; return its result.
local function exec(client, buf, command, arguments)
  local reply
  client:exec_cmd({ title = command, command = command, arguments = arguments }, { bufnr = buf }, function(err, result)
    reply = { err = err, result = result }
  end)
  wait_for('the reply to ' .. command, function()
    return reply
  end)
  assert(not reply.err, command .. ' failed: ' .. vim.inspect(reply.err))
  return reply.result
end

local function missing(labels, wanted)
  local have = {}
  for _, l in ipairs(labels) do
    have[l] = true
  end
  return vim.tbl_filter(function(w)
    return not have[w]
  end, wanted)
end

-------------------------------------------------------------------------------------------------
-- The checks, in the order a new user meets the features.

H.header()

local broken ---@type integer
check('attach: the README config starts livenote at the workspace root', function()
  local client
  broken, client = open('broken.md')
  H.assert_root(client)
  local info = client.server_info or {}
  return ('%s %s, %s positions'):format(info.name, info.version, client.offset_encoding)
end)

check('diagnostics: `active: yes` is live/wrong-type from livenote', function()
  local d = H.wait_diagnostic(broken, 'live/wrong-type')
  assert(d.lnum == 4 and d.col == 10, ('at %d:%d, expected on `yes` (4:10)'):format(d.lnum, d.col))
  assert(d.severity == vim.diagnostic.severity.ERROR, 'severity ' .. tostring(d.severity))
  return ('%d:%d %s'):format(d.lnum + 1, d.col + 1, d.message)
end)

check('idle: reading a note from disk does not start a refresh storm', function()
  -- Any program reading a note (the editor opening it, grep, a backup) opens the file; the
  -- server watches the workspace and must not take that for a change.
  vim.wait(300)
  local before = from_server['workspace/inlayHint/refresh'] or 0
  vim.fn.readfile(ws .. '/broken.md')
  vim.wait(1000)
  local n = (from_server['workspace/inlayHint/refresh'] or 0) - before
  -- Nothing changed: no refresh is due (one may fall on a minute boundary).
  assert(n <= 1, ('the server sent %d workspace/inlayHint/refresh requests in 1 s after one read'):format(n))
  return ('%d refresh request(s) in 1 s'):format(n)
end)

check('status lens (from the config\'s LspAttach refresh): the broken note is invalid', function()
  return wait_for('an "Invalid: fix 1 error" lens', function()
    return find_lens(broken, '^Invalid: fix 1 error$')
  end, function()
    return vim.inspect(lens_titles(broken))
  end)
end)

check('inlay hints: the cron value reads "every hour"', function()
  return wait_for('an "every hour" hint after the cronExpr value', function()
    for _, l in ipairs(H.hint_labels(broken)) do
      if l:match('^6:every hour') then
        return l
      end
    end
  end, function()
    return vim.inspect(H.hint_labels(broken))
  end)
end)

local complete ---@type integer
check('completion: keys inside `live:`', function()
  complete = open('complete.md')
  -- Type an indented empty line at the end of the block, as a user about to add a key.
  vim.api.nvim_buf_set_lines(complete, 4, 4, false, { '  ' })
  vim.api.nvim_win_set_cursor(0, { 5, 2 })
  local labels = completion_labels(complete, 4, 2)
  local lack = missing(labels, { 'triggers', 'active' })
  assert(#lack == 0, ('missing %s in %s'):format(vim.inspect(lack), vim.inspect(labels)))
  return table.concat(labels, ', ')
end)

check('completion: true/false after `active:`, and the chosen item fixes the line', function()
  vim.api.nvim_buf_set_lines(complete, 4, 5, false, { '  active: ' })
  vim.api.nvim_win_set_cursor(0, { 5, 10 })
  local labels, items = completion_labels(complete, 4, 10)
  local lack = missing(labels, { 'true', 'false' })
  assert(#lack == 0, ('missing %s in %s'):format(vim.inspect(lack), vim.inspect(labels)))
  -- Accept `true` as the completion menu would: its text edit replaces the value slot.
  local item = items['true']
  local client = assert(client_of(complete))
  local edit = item.textEdit
  if edit then
    edit = { range = edit.range or edit.replace, newText = edit.newText }
    vim.lsp.util.apply_text_edits({ edit }, complete, client.offset_encoding)
  else
    vim.api.nvim_buf_set_text(complete, 4, 10, 4, 10, { item.insertText or item.label })
  end
  local line = lines(complete)[5]
  assert(line == '  active: true', ('the line reads %q'):format(line))
  return labels and table.concat(labels, ', ')
end)

local passive ---@type integer
check('"Make live" from the code-action menu turns a passive note live', function()
  passive = open('passive.md')
  vim.api.nvim_win_set_cursor(0, { 3, 0 })
  local seen = {}
  vim.lsp.buf.code_action({
    apply = true,
    filter = function(action)
      table.insert(seen, action.title)
      return action.title == 'Make live'
    end,
  })
  wait_for('`live:` and `objective:` in the buffer', function()
    return count_lines(passive, '^live:') > 0 and count_lines(passive, '^  objective:') > 0
  end, function()
    return ('actions %s, notes %s, text:\n%s'):format(vim.inspect(seen), vim.inspect(notes), text(passive))
  end)
  -- An action carrying both an edit and a command would rewrite the note a second time (the
  -- command's workspace/applyEdit) or fail loudly; give that time to show.
  vim.wait(1500, function()
    return count_lines(passive, '^live:') > 1 or #H.problems_since(0) > 0
  end, 25)
  local errs = H.problems_since(0)
  assert(#errs == 0, 'the editor showed errors: ' .. vim.inspect(errs) .. '\n' .. text(passive))
  assert(
    count_lines(passive, '^live:') == 1 and count_lines(passive, '^%-%-%-$') == 2,
    'expected one frontmatter with one `live:` block, got:\n' .. text(passive)
  )
  assert(lines(passive)[1] == '---', 'the frontmatter does not start the note:\n' .. text(passive))
  assert(text(passive):match('\n# Groceries\n\n%- milk\n%- bread$'), 'the body changed:\n' .. text(passive))
  return (text(passive):gsub('\n', '⏎'))
end)

check('status lens: the note made live waits for trust in a new workspace', function()
  -- What the config does on InsertLeave/BufEnter; repeated while an earlier refresh is in flight.
  return wait_for('a "Waiting for trust" lens', function()
    vim.lsp.codelens.refresh({ bufnr = passive })
    return find_lens(passive, '^Waiting for trust$')
  end, function()
    return vim.inspect(lens_titles(passive))
  end)
end)

check('trust the workspace (livenote.trustWorkspace), leave insert mode: "● Live · never run"', function()
  local client = assert(client_of(passive), 'livenote is not attached')
  local reply = exec(client, passive, 'livenote.trustWorkspace', { vim.uri_from_bufnr(passive) })
  local want = vim.uv.fs_realpath(ws)
  assert(
    type(reply) == 'table' and vim.tbl_contains(reply, want),
    ('trusted %s, expected the workspace %s'):format(vim.inspect(reply), want)
  )
  -- Nvim 0.11 has no workspace/codeLens/refresh: the config's InsertLeave refresh shows it.
  return wait_for('a "● Live · never run" lens', function()
    vim.api.nvim_feedkeys(vim.keycode('i<Esc>'), 'x', false)
    return find_lens(passive, '^● Live · never run')
  end, function()
    return vim.inspect(lens_titles(passive))
  end)
end)

check('Run now: the lens shows the run once it ends (the config\'s LspProgress refresh)', function()
  local client = assert(client_of(passive), 'livenote is not attached')
  exec(client, passive, 'livenote.run', { vim.uri_from_bufnr(passive) })
  -- No refresh asked here, no key typed: only the end of the run's progress refreshes.
  return wait_for('an "updated just now" lens', function()
    return find_lens(passive, 'updated just now')
  end, function()
    return vim.inspect(lens_titles(passive)) .. '\n' .. text(passive)
  end)
end)

check('"Make live" as a command: the server\'s workspace/applyEdit lands in the buffer', function()
  local buf, client = open('errands.md')
  exec(client, buf, 'livenote.makeLive', { vim.uri_from_bufnr(buf) })
  wait_for('`live:` and `objective:` in the buffer', function()
    return count_lines(buf, '^live:') == 1 and count_lines(buf, '^  objective:') == 1
  end, function()
    return ('notes %s, text:\n%s'):format(vim.inspect(notes), text(buf))
  end)
  local errs = H.problems_since(0)
  assert(#errs == 0, 'the editor showed errors: ' .. vim.inspect(errs))
  return wait_for('a "● Live · never run" lens', function()
    vim.lsp.codelens.refresh({ bufnr = buf })
    return find_lens(buf, '^● Live · never run')
  end, function()
    return vim.inspect(lens_titles(buf))
  end)
end)

check('shutdown: the server exits cleanly when Nvim stops it', H.shutdown)

H.finish()
