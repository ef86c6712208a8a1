-- Headless Neovim test of livenote's tree-sitter highlight query (queries/yaml/highlights.scm).
--
--   nvim --headless --clean -l grammars/test/treesitter.lua <dir with parser/yaml.so> <editors/nvim> \
--     [--base <dir with queries/yaml/highlights.scm>] [query file ...]
--
-- Run by grammars/test/treesitter.sh, which builds the yaml parser first. The editors/nvim dir
-- goes on the runtimepath the way the Neovim plugin is installed, so the query is picked up from
-- there. Neovim 0.11 ships no yaml query, so without --base ours (`; extends`) is the whole
-- query; --base adds a base yaml highlights query first, as nvim-treesitter does: ours must
-- then extend it, and only captures with our priority count as livenote's. Each other argument
-- is a query file that must parse against the real yaml parser. Prints one ok/FAIL line per
-- check and exits non-zero if any failed.

-- print() in `nvim -l` defers the newline to the next message; write whole lines instead.
local function say(line)
  io.stdout:write(line, '\n')
end

local parser_dir, plugin_dir = arg[1], arg[2]
assert(parser_dir and plugin_dir, 'usage: treesitter.lua <parser dir> <editors/nvim dir> [--base dir] [query files]')
local base_dir
local query_files = {}
do
  local i = 3
  while i <= #arg do
    if arg[i] == '--base' then
      base_dir, i = arg[i + 1], i + 2
    else
      query_files[#query_files + 1], i = arg[i], i + 1
    end
  end
end
vim.opt.runtimepath:prepend(plugin_dir)
if base_dir then
  vim.opt.runtimepath:append(base_dir) -- after editors/nvim: a base query is found first either way
end
vim.opt.runtimepath:prepend(parser_dir)
say('# ' .. (base_dir and ('with the base yaml query of ' .. base_dir) or 'no base yaml query'))

local failures, checks = 0, 0
local function check(ok, what, detail)
  checks = checks + 1
  if ok then
    say('ok   ' .. what)
  else
    failures = failures + 1
    say('FAIL ' .. what .. (detail and (': ' .. detail) or ''))
  end
end

-- The parser and the query files.
check(pcall(vim.treesitter.language.add, 'yaml'), 'the yaml parser loads from ' .. parser_dir)
-- The standard capture names: those `:h treesitter-highlight-groups` lists.
local standard = {}
do
  local doc = assert(vim.api.nvim_get_runtime_file('doc/treesitter.txt', false)[1], 'no doc/treesitter.txt')
  local in_section = false
  for line in io.lines(doc) do
    if line:find('*treesitter-highlight-groups*', 1, true) then
      in_section = true
    elseif line:find('*treesitter-highlight-spell*', 1, true) then
      in_section = false
    elseif in_section then
      local name = line:match('^@([%w_.]+)')
      if name then
        standard[name] = true
      end
    end
  end
end
check(standard.keyword and standard.comment and standard['string.special'], 'read the standard capture names from :h treesitter-highlight-groups')

for _, file in ipairs(query_files) do
  local f = assert(io.open(file, 'r'))
  local text = f:read('*a')
  f:close()
  local ok, query = pcall(vim.treesitter.query.parse, 'yaml', text)
  check(ok, 'query parses against the yaml parser: ' .. file, tostring(query))
  if ok then
    local odd = vim.tbl_filter(function(name)
      return not vim.startswith(name, '_') and not standard[name]
    end, query.captures)
    check(#odd == 0, 'query uses only standard capture names: ' .. file, table.concat(odd, ', '))
  end
end
local files = vim.tbl_map(vim.fs.normalize, vim.treesitter.query.get_files('yaml', 'highlights'))
local ours = vim.fs.normalize(plugin_dir .. '/queries/yaml/highlights.scm')
if base_dir then
  check(
    #files == 2 and vim.startswith(files[1], vim.fs.normalize(base_dir)) and files[2] == ours,
    'the query extends the base yaml query (base first, then editors/nvim)',
    vim.inspect(files)
  )
  check(pcall(vim.treesitter.query.get, 'yaml', 'highlights'), 'base + extension parse together')
else
  check(#files == 1 and files[1] == ours, 'the highlights query is found on the runtimepath in editors/nvim', vim.inspect(files))
end

-- A markdown buffer, highlighted by tree-sitter (get_captures_at_pos reads the active
-- highlighter's queries) and parsed with its injections.
local function note(lines)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.treesitter.start(buf, 'markdown')
  local parser = vim.treesitter.get_parser(buf, 'markdown')
  parser:parse(true)
  local has_yaml = false
  parser:for_each_tree(function(_, ltree)
    has_yaml = has_yaml or ltree:lang() == 'yaml'
  end)
  return buf, lines, has_yaml
end

-- (row, col) of the nth occurrence of `needle` on the first line that contains `line_pat`.
local function pos(lines, line_pat, needle, nth)
  for row, line in ipairs(lines) do
    if line:find(line_pat, 1, true) then
      local col = 0
      for _ = 1, nth or 1 do
        col = assert(line:find(needle, col + 1, true), needle .. ' not on line ' .. line)
      end
      return row - 1, col - 1
    end
  end
  error('no line contains ' .. line_pat)
end

-- The yaml captures at that position: { name = { metadata, ... } }.
local function captures(buf, lines, line_pat, needle, nth)
  local row, col = pos(lines, line_pat, needle, nth)
  local found = {}
  for _, c in ipairs(vim.treesitter.get_captures_at_pos(buf, row, col)) do
    if c.lang == 'yaml' then
      found[c.capture] = found[c.capture] or {}
      table.insert(found[c.capture], c.metadata or {})
    end
  end
  return found
end

local function names(found)
  local out = vim.tbl_keys(found)
  table.sort(out)
  return '{' .. table.concat(out, ', ') .. '}'
end

-- The metadata of livenote's capture `name` in `found`, if any. With a base query, its
-- captures (no priority) are not livenote's; ours all set one.
local function ours(found, name)
  for _, metadata in ipairs(found[name] or {}) do
    if not base_dir or metadata.priority ~= nil then
      return metadata
    end
  end
end

local function expect(buf, lines, line_pat, needle, capture, nth)
  local found = captures(buf, lines, line_pat, needle, nth)
  local metadata = ours(found, capture)
  check(metadata ~= nil, ('%-28s is @%s'):format(needle, capture), 'captures ' .. names(found))
  return metadata
end

local LIVENOTE = { 'keyword', 'property', 'comment', 'string.special', 'number', 'boolean' }
local function expect_none(buf, lines, line_pat, needle, why, nth)
  local found = captures(buf, lines, line_pat, needle, nth)
  local hit = vim.tbl_filter(function(name)
    return ours(found, name) ~= nil
  end, LIVENOTE)
  check(#hit == 0, ('%-28s has no livenote capture (%s)'):format(needle, why), 'captures ' .. names(found))
end

local function buffer_checks()
  -- 1. A live note (the spec's example).
  local buf, lines, has_yaml = note({
    '---',
    'title: Chicago time',
    'live:',
    '  objective: |',
    '    Show the current time in Chicago, one short line.',
    '  active: true',
    '  triggers:',
    '    cronExpr: "0 * * * *"',
    '    windows:',
    '      - startTime: "09:00"',
    '        endTime: "12:00"',
    '    eventMatchCriteria: "Emails about Q3 planning"',
    '  provider: openai',
    '  cron: "0 9 * * *"',
    '  lastAttemptAt: "2026-05-08T15:00:00.123Z"',
    '  lastRunAt: "2026-05-08T15:00:01.234Z"',
    '  lastRunError: null',
    'meta:',
    '  live: nested',
    '  startTime: "09:00"',
    '---',
    '',
    '# Chicago time',
    '',
    'live: in the body',
  })
  check(has_yaml, 'the markdown parser injects yaml into the frontmatter')

  expect(buf, lines, 'live:', 'live', 'keyword')
  expect(buf, lines, 'objective:', 'objective', 'property')
  expect(buf, lines, 'active: true', 'active', 'property')
  expect(buf, lines, 'active: true', 'true', 'boolean')
  expect(buf, lines, 'triggers:', 'triggers', 'property')
  expect(buf, lines, 'provider:', 'provider', 'property')
  expect(buf, lines, 'cronExpr:', 'cronExpr', 'property')
  expect(buf, lines, 'cronExpr:', '0 * * * *', 'string.special')
  expect(buf, lines, 'windows:', 'windows', 'property')
  expect(buf, lines, 'eventMatchCriteria:', 'eventMatchCriteria', 'property')
  expect(buf, lines, '- startTime:', 'startTime', 'property')
  expect(buf, lines, '- startTime:', '09:00', 'number')
  expect(buf, lines, 'endTime:', 'endTime', 'property')
  expect(buf, lines, 'endTime:', '12:00', 'number')
  local rt = expect(buf, lines, 'lastRunAt:', 'lastRunAt', 'comment')
  check(
    rt ~= nil and tonumber(rt.priority or 0) > 100,
    'runtime @comment outranks a base query (priority > 100)',
    rt and tostring(rt.priority)
  )
  expect(buf, lines, 'lastRunAt:', '2026-05-08T15:00:01.234Z', 'comment')
  expect(buf, lines, 'lastAttemptAt:', 'lastAttemptAt', 'comment')
  expect(buf, lines, 'lastRunError:', 'null', 'comment')
  expect_none(buf, lines, 'title:', 'title', 'a key outside live:')
  expect_none(buf, lines, 'title:', 'Chicago time', 'a value outside live:')
  expect_none(buf, lines, 'cron:', 'cron', 'an unknown key')
  expect_none(buf, lines, 'cron:', '0 9 * * *', 'the value of an unknown key')
  expect_none(buf, lines, 'Show the current time', 'Show', 'the objective text')
  expect_none(buf, lines, 'live: nested', 'live', 'not top-level')
  expect_none(buf, lines, '  startTime: "09:00"', '09:00', 'not inside live: triggers: windows:')

  -- The body is markdown, not yaml.
  local body_row = pos(lines, 'live: in the body', 'live')
  check(
    #vim.tbl_filter(function(c)
      return c.lang == 'yaml'
    end, vim.treesitter.get_captures_at_pos(buf, body_row, 0)) == 0,
    'live: in the body has no yaml capture'
  )

  -- 2. A note without a live: block; `active: yes` is a string in YAML 1.2, not a boolean.
  buf, lines = note({
    '---',
    'title: Reading list',
    'objective: top-level, not in live:',
    'cronExpr: "0 * * * *"',
    'lastRunAt: "2026-05-08T15:00:01.234Z"',
    '---',
    '# Reading list',
  })
  expect_none(buf, lines, 'objective:', 'objective', 'no live: block')
  expect_none(buf, lines, 'cronExpr:', '0 * * * *', 'no live: block')
  expect_none(buf, lines, 'lastRunAt:', 'lastRunAt', 'no live: block')

  buf, lines = note({
    '---',
    'live:',
    '  objective: Paused digest.',
    '  active: yes',
    '---',
  })
  expect(buf, lines, 'active: yes', 'active', 'property')
  expect_none(buf, lines, 'active: yes', 'yes', 'yes is a string in YAML 1.2')
end

local ok, err = pcall(buffer_checks)
check(ok, 'the buffer checks ran to the end', tostring(err))

say(('%d passed, %d failed'):format(checks - failures, failures))
os.exit(failures == 0 and 0 or 1)
