--- The :Live* user commands, the quickfix list of live notes and the optional keymaps.
--- Everything is asynchronous: a slow server never freezes the editor.
local compat = require('livenote.compat')

local M = {}

local levels = vim.log.levels

local function notify(msg, level)
  require('livenote').notify(msg, level)
end

local function current(bufnr)
  return (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
end

--- The livenote client of a buffer, or nil after telling the user why there is none.
---@param bufnr integer
---@return vim.lsp.Client?
local function client_or_warn(bufnr)
  local client = require('livenote').get_client(bufnr)
  if client then
    return client
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  local why
  if not require('livenote').did_setup then
    why = "require('livenote').setup() has not been called"
  elseif name == '' then
    why = 'this buffer is not a file; open a markdown note'
  elseif not vim.tbl_contains(require('livenote.config').current.filetypes, vim.bo[bufnr].filetype) then
    why = ('this buffer is %s, not a note (filetypes: %s)'):format(
      vim.bo[bufnr].filetype == '' and 'not markdown' or ('filetype ' .. vim.bo[bufnr].filetype),
      table.concat(require('livenote.config').current.filetypes, ', ')
    )
  else
    why = 'the server is not attached to this note; see :checkhealth livenote'
  end
  notify('no livenote server for this buffer: ' .. why, levels.WARN)
  return nil
end

--- Report a failed command ("livenote: Run now failed: <server's message>").
---@param what string
---@param err lsp.ResponseError|string
local function report(what, err)
  local msg = type(err) == 'table' and (err.message or vim.inspect(err)) or tostring(err)
  notify(('%s failed: %s'):format(what, msg), levels.ERROR)
end

--- Run a server command for a note (the URI is always the first argument).
---@param bufnr integer
---@param title string what the user asked for, for messages
---@param command string
---@param extra any[] arguments after the URI
---@param on_ok? fun(result: any, client: vim.lsp.Client)
local function note_command(bufnr, title, command, extra, on_ok)
  local client = client_or_warn(bufnr)
  if not client then
    return
  end
  local args = { vim.uri_from_bufnr(bufnr) }
  vim.list_extend(args, extra)
  compat.exec(client, bufnr, command, args, function(err, result)
    if err then
      report(title, err)
    elseif on_ok then
      on_ok(result, client)
    end
    -- The server tells 0.10/0.11 about status changes, but not every edit changes a status
    -- ("Make live" on a note that was already being edited): refresh once more to be sure.
    if vim.api.nvim_buf_is_valid(bufnr) then
      require('livenote.lens').schedule(bufnr, 200)
    end
  end)
end

--- What the simple commands send: title, server command, extra arguments.
---@type table<string, {[1]: string, [2]: string, [3]: any[]}>
local SIMPLE = {
  stop = { 'Stop', 'livenote.stop', {} },
  make = { 'Make live', 'livenote.makeLive', {} },
  passive = { 'Make passive', 'livenote.makePassive', {} },
  pause = { 'Pause', 'livenote.setActive', { false } },
  resume = { 'Resume', 'livenote.setActive', { true } },
  undo = { 'Undo last run', 'livenote.undoLastRun', {} },
  memory = { 'Clear agent memory', 'livenote.clearMemory', {} },
  trust = { 'Trust workspace', 'livenote.trustWorkspace', {} },
}

---@param what 'stop'|'make'|'passive'|'pause'|'resume'|'undo'|'memory'|'trust'
---@param bufnr? integer
function M.simple(what, bufnr)
  bufnr = current(bufnr)
  local s = assert(SIMPLE[what], what)
  note_command(bufnr, s[1], s[2], s[3], function(result)
    if what == 'stop' and type(result) == 'table' and result.stopped == false then
      notify('nothing to stop: the note is not updating', levels.INFO)
    elseif what == 'trust' and type(result) == 'table' then
      notify('trusted ' .. table.concat(result, ', '), levels.INFO)
    elseif what == 'memory' and type(result) == 'table' then
      -- The server answers `cleared = false` when there was nothing to delete.
      local name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ':t')
      local msg = result.cleared == true and ('cleared the agent memory of ' .. name)
        or (name .. ' has no agent memory')
      notify(msg, levels.INFO)
    end
  end)
end

--- :LiveAsk [SENTENCE]: one sentence about the note to the server's model (ask.lua).
---@param bufnr? integer
---@param sentence? string
function M.ask(bufnr, sentence)
  bufnr = current(bufnr)
  local client = client_or_warn(bufnr)
  if client then
    require('livenote.ask').ask(client, bufnr, sentence)
  end
end

--- :LiveMake [SENTENCE]: the server's model drafts the `live:` block from one sentence ("keep
--- the latest Rust release notes, every Monday morning"), asked with vim.ui.input when none is
--- given; an empty answer is the template (the objective from the title), a cancelled one
--- nothing. Without a model provider the sentence becomes the objective, and the server says why.
---@param bufnr? integer
---@param sentence? string
function M.make(bufnr, sentence)
  bufnr = current(bufnr)
  if not client_or_warn(bufnr) then
    return
  end
  local function send(answer)
    if answer == nil then
      return
    end
    answer = vim.trim(answer)
    if answer == '' then
      return M.simple('make', bufnr)
    end
    note_command(bufnr, 'Make live', 'livenote.makeLive', { { describe = answer, run = false } }, function()
      notify('drafting the live block of ' .. vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ':t') .. '…')
    end)
  end
  if sentence and vim.trim(sentence) ~= '' then
    return send(sentence)
  end
  vim.ui.input({ prompt = 'Make live: what should this note keep current, and when? ' }, function(answer)
    -- vim.ui.input may answer from a prompt's callback, outside the main loop's safe points.
    vim.schedule(function()
      send(answer)
    end)
  end)
end

---@param bufnr? integer
---@param context? string
function M.run(bufnr, context)
  bufnr = current(bufnr)
  if context and vim.trim(context) == '' then
    context = nil
  end
  note_command(bufnr, 'Run now', 'livenote.run', { context }, function()
    local name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ':t')
    -- Its end is said too, in place of this message (follow.lua).
    require('livenote.follow').expect_run(bufnr, name)
    notify('updating ' .. name .. '…')
  end)
end

-------------------------------------------------------------------------------------------------
-- Times in list entries

--- Seconds since the epoch of an RFC 3339 time ("2026-05-08T15:00:01.234Z", "...+02:00").
---@param s string?
---@return integer?
local function parse_time(s)
  if type(s) ~= 'string' then
    return nil
  end
  local y, mo, d, h, mi, sec, rest = s:match('^(%d+)-(%d+)-(%d+)[T ](%d+):(%d+):(%d+)(.*)$')
  if not y then
    return nil
  end
  local offset = 0
  local sign, oh, om = rest:match('([+-])(%d%d):?(%d%d)$')
  if sign then
    offset = (tonumber(oh) * 3600 + tonumber(om) * 60) * (sign == '-' and -1 or 1)
  end
  -- os.time reads the table as local time; undo that to get UTC, then apply the offset.
  local t = {
    year = tonumber(y),
    month = tonumber(mo),
    day = tonumber(d),
    hour = tonumber(h),
    min = tonumber(mi),
    sec = tonumber(sec),
    isdst = false,
  }
  local as_local = os.time(t)
  local utc_of_that = os.time(os.date('!*t', as_local) --[[@as osdateparam]])
  return as_local + (as_local - utc_of_that) - offset
end

--- "just now", "5 min ago", "3 h ago", "2 d ago".
---@param t integer
---@return string
local function ago(t)
  local s = os.time() - t
  if s < 60 then
    return 'just now'
  elseif s < 3600 then
    return ('%d min ago'):format(math.floor(s / 60))
  elseif s < 86400 then
    return ('%d h ago'):format(math.floor(s / 3600))
  end
  return ('%d d ago'):format(math.floor(s / 86400))
end

--- "15:00" today, else "Tue 09:00" within a week, else "2026-05-08 09:00", in local time.
---@param t integer
---@return string
local function at(t)
  local now = os.time()
  if os.date('%Y-%m-%d', t) == os.date('%Y-%m-%d', now) then
    return os.date('%H:%M', t) --[[@as string]]
  elseif t > now and t - now < 6 * 86400 then
    return os.date('%a %H:%M', t) --[[@as string]]
  end
  return os.date('%Y-%m-%d %H:%M', t) --[[@as string]]
end

--- The words for a status from livenote.listNotes.
local STATUS = {
  live = '● live',
  running = 'updating…',
  paused = 'paused',
  untrusted = 'waiting for trust',
  stopped = 'stopped',
  failed = 'failed',
  invalid = 'invalid',
}

--- One line about a live note: "● live · updated 5 min ago · next 15:00".
---@param item table an entry of livenote.listNotes
---@return string
function M.describe(item)
  local parts = { STATUS[item.status] or tostring(item.status) }
  local last = parse_time(item.lastRunAt)
  table.insert(parts, last and ('updated ' .. ago(last)) or 'never run')
  local next_due = parse_time(item.nextDue)
  local triggers = type(item.triggers) == 'table' and item.triggers or {}
  if item.status == 'invalid' then
    -- Nothing fires until the errors are fixed; the diagnostics say what they are.
    table.insert(parts, 'fix the errors in live:')
  elseif item.due and item.due ~= vim.NIL then
    table.insert(parts, 'due now (' .. tostring(item.due) .. ')')
  elseif next_due then
    table.insert(parts, 'next ' .. at(next_due))
  elseif item.active ~= false and not triggers.cronExpr and not triggers.windows then
    table.insert(parts, triggers.eventMatchCriteria and 'on events' or 'manual only')
  end
  -- A stopped run's "stopped" is its status already.
  if type(item.lastRunError) == 'string' and item.lastRunError ~= '' and item.status ~= 'stopped' then
    local reason = item.lastRunError:gsub('%s+', ' ')
    if #reason > 80 then
      reason = reason:sub(1, 77) .. '...'
    end
    table.insert(parts, 'error: ' .. reason)
  end
  return table.concat(parts, ' · ')
end

-------------------------------------------------------------------------------------------------
-- :LiveList and :LiveStatus

--- The line of the `live:` key in a note's frontmatter (1-based), 1 if not found. Reads the
--- buffer when the note is loaded (it may be unsaved), else the head of the file.
---@param path string
---@return integer
local function live_line(path)
  -- Compared by name, not with bufnr(), which reads its argument as a file pattern.
  local real = vim.uv.fs_realpath(path) or path
  local bufnr
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_get_name(b)
    if name ~= '' and vim.api.nvim_buf_is_loaded(b) and (vim.uv.fs_realpath(name) or name) == real then
      bufnr = b
      break
    end
  end
  local lines
  if bufnr then
    lines = vim.api.nvim_buf_get_lines(bufnr, 0, 400, false)
  else
    local ok, l = pcall(vim.fn.readfile, path, '', 400)
    lines = ok and l or {}
  end
  local first = (lines[1] or ''):gsub('^\239\187\191', ''):gsub('\r$', '')
  if first ~= '---' then
    return 1
  end
  for i = 2, #lines do
    local l = lines[i]:gsub('\r$', '')
    if l == '---' or l == '...' then
      break
    elseif l:match('^live%s*:') then
      return i
    end
  end
  return 1
end

--- The absolute path of a listNotes entry: its path is relative to the workspace folder the
--- note is in, so try the client's folders (root_dir first).
---@param client vim.lsp.Client
---@param rel string
---@return string
local function resolve(client, rel)
  if rel:sub(1, 1) == '/' or rel:match('^%a:[/\\]') then
    return rel
  end
  local roots = { client.root_dir }
  for _, f in ipairs(client.workspace_folders or {}) do
    table.insert(roots, vim.uri_to_fname(f.uri))
  end
  for _, root in ipairs(roots) do
    if root then
      local p = vim.fs.joinpath(root, rel)
      if vim.uv.fs_stat(p) then
        return p
      end
    end
  end
  return vim.fs.joinpath(client.root_dir or vim.fn.getcwd(), rel)
end

--- Ask every running livenote server for its live notes; `done` gets (entries, errors) once
--- all have answered. Each entry is a listNotes item plus `filename`.
---@param done fun(entries: table[], errors: string[])
local function collect(done)
  local clients = vim.lsp.get_clients({ name = require('livenote').NAME })
  local entries, errors, waiting = {}, {}, #clients
  if waiting == 0 then
    return done(entries, errors)
  end
  local seen = {}
  for _, client in ipairs(clients) do
    -- Any buffer of the client will do for the request; it takes no parameters.
    local bufnr = next(client.attached_buffers or {}) or vim.api.nvim_get_current_buf()
    compat.list_notes(client, bufnr, function(err, result)
      if err then
        table.insert(errors, err.message or vim.inspect(err))
      else
        for _, item in ipairs(type(result) == 'table' and result or {}) do
          local filename = resolve(client, item.path)
          -- Two servers over nested folders may both list a note: show it once.
          local key = vim.uv.fs_realpath(filename) or filename
          if not seen[key] then
            seen[key] = true
            item.filename = filename
            table.insert(entries, item)
          end
        end
      end
      waiting = waiting - 1
      if waiting == 0 then
        table.sort(entries, function(a, b)
          return a.filename < b.filename
        end)
        done(entries, errors)
      end
    end)
  end
end

--- Fill the quickfix list with the live notes and open it.
---@param opts? { open?: boolean, on_done?: fun(items: table[]) }
function M.list(opts)
  opts = opts or {}
  if #vim.lsp.get_clients({ name = require('livenote').NAME }) == 0 then
    notify('no livenote server is running: open a note (a markdown file) first', levels.WARN)
    return
  end
  collect(function(entries, errors)
    for _, e in ipairs(errors) do
      report('List live notes', e)
    end
    if #entries == 0 and #errors > 0 then
      return
    end
    local items = {}
    for _, e in ipairs(entries) do
      table.insert(items, {
        filename = e.filename,
        lnum = live_line(e.filename),
        col = 1,
        text = M.describe(e),
        type = (e.status == 'failed' or e.status == 'invalid') and 'E' or nil,
        user_data = e,
      })
    end
    vim.fn.setqflist({}, ' ', { title = 'livenote: live notes', items = items })
    if #items == 0 then
      notify('no live notes in the workspace (:LiveMake makes the current note live)')
    elseif opts.open ~= false then
      vim.cmd('botright copen')
    end
    if opts.on_done then
      opts.on_done(items)
    end
  end)
end

--- The same live notes through |vim.ui.select| (a picker, when one is installed); the chosen
--- note opens at its `live:` line.
---@param opts? { on_done?: fun(entries: table[]) }
function M.pick(opts)
  opts = opts or {}
  if #vim.lsp.get_clients({ name = require('livenote').NAME }) == 0 then
    notify('no livenote server is running: open a note (a markdown file) first', levels.WARN)
    return
  end
  collect(function(entries, errors)
    for _, e in ipairs(errors) do
      report('List live notes', e)
    end
    if #entries == 0 then
      if #errors == 0 then
        notify('no live notes in the workspace (:LiveMake makes the current note live)')
      end
      return
    end
    if opts.on_done then
      opts.on_done(entries)
    end
    vim.ui.select(entries, {
      prompt = 'Live notes',
      kind = 'livenote.note',
      format_item = function(e)
        return e.path .. ': ' .. M.describe(e)
      end,
    }, function(choice)
      if not choice then
        return
      end
      vim.cmd.edit(vim.fn.fnameescape(choice.filename))
      pcall(vim.api.nvim_win_set_cursor, 0, { live_line(choice.filename), 0 })
    end)
  end)
end

-------------------------------------------------------------------------------------------------
-- :LiveHistory

--- "1,234".
---@param n number
---@return string
local function grouped(n)
  local s = tostring(math.floor(n))
  while true do
    local t, k = s:gsub('^(-?%d+)(%d%d%d)', '%1,%2')
    s = t
    if k == 0 then
      return s
    end
  end
end

--- One line about a run of `livenote/noteHistory`: "2026-05-08 09:00 · cron · done · +3 -1 ·
--- 1,234 tokens · 4.2 s · <summary>".
---@param r table
---@return string
function M.describe_run(r)
  local t = parse_time(r.time)
  local parts = {
    t and os.date('%Y-%m-%d %H:%M', t) --[[@as string]] or r.id,
    type(r.trigger) == 'string' and r.trigger or '?',
    tostring(r.outcome or 'unknown'),
  }
  if type(r.linesAdded) == 'number' and type(r.linesRemoved) == 'number' then
    table.insert(parts, ('+%d -%d'):format(r.linesAdded, r.linesRemoved))
  end
  if type(r.tokens) == 'table' then
    table.insert(parts, grouped((tonumber(r.tokens.input) or 0) + (tonumber(r.tokens.output) or 0)) .. ' tokens')
  end
  if type(r.durationMs) == 'number' then
    table.insert(parts, ('%.1f s'):format(r.durationMs / 1000))
  end
  if type(r.summary) == 'string' and r.summary ~= '' then
    local summary = r.summary:gsub('%s+', ' ')
    if #summary > 100 then
      summary = summary:sub(1, 97) .. '...'
    end
    table.insert(parts, summary)
  end
  return table.concat(parts, ' · ')
end

--- A scratch buffer named `name` in the current window, holding `text`'s lines.
---@param name string
---@param text string[]
---@param filetype string
---@return integer
local function scratch(name, text, filetype)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = 'wipe'
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, text)
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = filetype
  -- A second look at the same run replaces the first buffer rather than failing (E95).
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if b ~= buf and vim.api.nvim_buf_get_name(b) == name then
      pcall(vim.api.nvim_buf_delete, b, { force = true })
    end
  end
  pcall(vim.api.nvim_buf_set_name, buf, name)
  return buf
end

--- The body before and after run `run` of `uri`, side by side in a new tab page in diff mode.
---@param client vim.lsp.Client
---@param bufnr integer a buffer of the client, for the request
---@param uri string
---@param run string
---@param on_done? fun(tab: integer)
function M.run_diff(client, bufnr, uri, run, on_done)
  compat.request(client, 'livenote/runDiff', { uri = uri, run = run }, function(err, result)
    if err then
      return report('Show run ' .. run, err)
    end
    if type(result) ~= 'table' or type(result.before) ~= 'string' or type(result.after) ~= 'string' then
      return report('Show run ' .. run, 'the server gave no bodies for this run')
    end
    local name = vim.fn.fnamemodify(vim.uri_to_fname(uri), ':t')
    local function lines(body)
      return vim.split((body:gsub('\r\n', '\n'):gsub('\n$', '')), '\n', { plain = true })
    end
    -- `tab split`, not `tabnew`: no empty buffer is left behind once the scratch one replaces it.
    vim.cmd('tab split')
    local before = scratch(('livenote://%s/%s/before'):format(name, run), lines(result.before), 'markdown')
    vim.api.nvim_set_current_buf(before)
    vim.cmd.diffthis()
    vim.cmd('rightbelow vsplit')
    local after = scratch(('livenote://%s/%s/after'):format(name, run), lines(result.after), 'markdown')
    vim.api.nvim_set_current_buf(after)
    vim.cmd.diffthis()
    if on_done then
      on_done(vim.api.nvim_get_current_tabpage())
    end
  end, bufnr)
end

--- The runs of the current note in a scratch buffer, newest first; `<CR>` on a run opens its
--- diff (|M.run_diff|), `q` closes the list.
---@param bufnr? integer
---@param on_done? fun(history_buf: integer)
function M.history(bufnr, on_done)
  bufnr = current(bufnr)
  local client = client_or_warn(bufnr)
  if not client then
    return
  end
  local uri = vim.uri_from_bufnr(bufnr)
  local name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ':t')
  local sent = compat.request(client, 'livenote/noteHistory', { uri = uri }, function(err, result)
    if err then
      return report('History', err)
    end
    local runs = type(result) == 'table' and result or {}
    local text = { ('Runs of %s, newest first (<CR>: what the run changed, q: close)'):format(name) }
    for _, r in ipairs(runs) do
      table.insert(text, M.describe_run(r))
    end
    if #runs == 0 then
      table.insert(text, 'no runs yet (:LiveRun runs the note now)')
    end
    vim.cmd('botright split')
    local buf = scratch('livenote://history/' .. name, text, 'livenote-history')
    vim.api.nvim_set_current_buf(buf)
    vim.api.nvim_win_set_height(0, math.min(#text, 15))
    -- The run of each line, by line number (line 1 is the heading).
    vim.b[buf].livenote_runs = vim.tbl_map(function(r)
      return r.id
    end, runs)
    vim.keymap.set('n', '<CR>', function()
      local id = (vim.b[buf].livenote_runs or {})[vim.api.nvim_win_get_cursor(0)[1] - 1]
      if id then
        M.run_diff(client, bufnr, uri, id)
      end
    end, { buffer = buf, desc = "livenote: show what this run changed" })
    vim.keymap.set('n', 'q', '<Cmd>close<CR>', { buffer = buf, desc = 'livenote: close the history' })
    if #runs > 0 then
      vim.api.nvim_win_set_cursor(0, { 2, 0 })
    end
    if on_done then
      on_done(buf)
    end
  end, bufnr)
  if not sent then
    report('History', 'the livenote server has stopped')
  end
end

--- Echo the status of the current note.
---@param bufnr? integer
function M.status(bufnr)
  bufnr = current(bufnr)
  local client = client_or_warn(bufnr)
  if not client then
    return
  end
  local me = vim.uv.fs_realpath(vim.api.nvim_buf_get_name(bufnr)) or vim.api.nvim_buf_get_name(bufnr)
  compat.list_notes(client, bufnr, function(err, result)
    if err then
      return report('Status', err)
    end
    -- The server lists notes as saved on disk, while the lens follows the buffer: with unsaved
    -- changes (":LivePause" not yet written) the lens is the truer answer.
    local modified = vim.bo[bufnr].modified
    local unsaved = modified and ' (unsaved)' or ''
    local lens = require('livenote').statusline(bufnr)
    if modified and lens ~= '' then
      return notify(vim.fn.fnamemodify(me, ':t') .. ': ' .. lens .. unsaved)
    end
    for _, item in ipairs(type(result) == 'table' and result or {}) do
      local p = resolve(client, item.path)
      if (vim.uv.fs_realpath(p) or p) == me then
        return notify(item.path .. ': ' .. M.describe(item) .. unsaved)
      end
    end
    if lens ~= '' then
      return notify(vim.fn.fnamemodify(me, ':t') .. ': ' .. lens .. unsaved)
    end
    notify('not a live note (:LiveMake makes it live)' .. unsaved)
  end)
end

-------------------------------------------------------------------------------------------------
-- Registration

--- Define the user commands (global: they act on the current buffer, and say so when it has no
--- livenote server).
function M.create()
  local cmd = vim.api.nvim_create_user_command
  cmd('LiveRun', function(a)
    M.run(0, a.args)
  end, { nargs = '*', desc = 'livenote: update the current note now (arguments: extra context)' })
  cmd('LiveStop', function()
    M.simple('stop')
  end, { desc = 'livenote: stop the running update of the current note' })
  cmd('LiveMake', function(a)
    M.make(0, a.args)
  end, { nargs = '*', desc = 'livenote: make the current note live (arguments, or asked: what it should keep current)' })
  cmd('LiveAsk', function(a)
    M.ask(0, a.args)
  end, { nargs = '*', desc = 'livenote: ask livenote to act on the current note or answer about it (arguments, or asked)' })
  cmd('LivePause', function()
    M.simple('pause')
  end, { desc = 'livenote: pause the current live note (active: false)' })
  cmd('LiveResume', function()
    M.simple('resume')
  end, { desc = 'livenote: resume the current live note' })
  cmd('LivePassive', function()
    M.simple('passive')
  end, { desc = 'livenote: make the current note passive (remove live:)' })
  cmd('LiveUndo', function()
    M.simple('undo')
  end, { desc = "livenote: restore the body from before the note's last run" })
  cmd('LiveClearMemory', function()
    M.simple('memory')
  end, { desc = "livenote: delete the current note's agent memory" })
  cmd('LiveTrust', function()
    M.simple('trust')
  end, { desc = "livenote: trust the current note's workspace" })
  cmd('LiveList', function(a)
    if a.args == 'qf' then
      M.list()
    elseif a.args == '' then
      M.pick()
    else
      notify((':LiveList takes nothing (a picker) or qf (the quickfix list), not %q'):format(a.args), levels.WARN)
    end
  end, {
    nargs = '?',
    complete = function()
      return { 'qf' }
    end,
    desc = 'livenote: pick a live note (:LiveList qf: the quickfix list)',
  })
  cmd('LiveHistory', function()
    M.history()
  end, { desc = "livenote: the current note's runs (<CR> on one: its diff)" })
  cmd('LiveStatus', function()
    M.status()
  end, { desc = 'livenote: show the status of the current note' })
end

--- Buffer-local mappings (opt-in with `keymaps`).
---@param bufnr integer
---@param maps table<livenote.KeymapAction, string|false>
function M.set_keymaps(bufnr, maps)
  local actions = {
    run = { M.run, 'Run now' },
    stop = {
      function()
        M.simple('stop')
      end,
      'Stop',
    },
    make = {
      function()
        M.make()
      end,
      'Make live',
    },
    pause = {
      function()
        M.simple('pause')
      end,
      'Pause',
    },
    resume = {
      function()
        M.simple('resume')
      end,
      'Resume',
    },
    undo = {
      function()
        M.simple('undo')
      end,
      'Undo last run',
    },
    list = { M.pick, 'Pick a live note' },
    history = { M.history, 'Runs of this note' },
    status = { M.status, 'Status' },
    lens = { vim.lsp.codelens.run, 'Run the code lens on this line' },
  }
  for action, lhs in pairs(maps) do
    local a = actions[action]
    if a and lhs then
      vim.keymap.set('n', lhs, function()
        a[1]()
      end, { buffer = bufnr, desc = 'livenote: ' .. a[2] })
    end
  end
end

return M
