-- bench/records.lua: the records API's writes and sign-in for wrk (bench/suites/records.sh).
--
-- SCENARIO (environment) picks one:
--   view    GET /api/collections/posts/records/ID, ID drawn from the file RECORDS_IDS
--           (one post id a line);
--   create  POST /api/collections/posts/records, a published post by the signed-in user;
--   update  PATCH /api/collections/posts/records/ID, ID drawn from RECORDS_OWN_IDS (posts
--           of the signed-in user, whose update rule is author = @request.auth.id);
--   auth    POST /api/collections/users/auth-with-password as one of RECORDS_USERS seeded
--           users (user0001@example.com ..., password123), drawn at random.
-- RECORDS_TOKEN is the signed-in user's token (create, update), RECORDS_USER its id.

local scenario = os.getenv("SCENARIO") or "view"
local token = os.getenv("RECORDS_TOKEN") or ""
local user = os.getenv("RECORDS_USER") or ""
local users = tonumber(os.getenv("RECORDS_USERS") or "300")
local base = "/api/collections/"

local function lines(path)
	local t = {}
	if path == nil or path == "" then
		return t
	end
	local f = io.open(path, "r")
	if f == nil then
		error("cannot open " .. path)
	end
	for l in f:lines() do
		if l ~= "" then
			table.insert(t, l)
		end
	end
	f:close()
	return t
end

local ids = lines(os.getenv("RECORDS_IDS"))
local own = lines(os.getenv("RECORDS_OWN_IDS"))
local json = { ["Content-Type"] = "application/json" }
local authed = { ["Content-Type"] = "application/json", ["Authorization"] = token }
local n = 0

function init(args)
	math.randomseed(os.time() + math.floor(os.clock() * 1e6))
end

local requests = {
	view = function()
		return wrk.format("GET", base .. "posts/records/" .. ids[math.random(#ids)])
	end,
	create = function()
		n = n + 1
		return wrk.format("POST", base .. "posts/records", authed,
		    '{"title":"Bench post ' .. n .. '","body":"Written by the benchmark.",' ..
		    '"status":"published","author":"' .. user .. '","tags":["tech"]}')
	end,
	update = function()
		return wrk.format("PATCH", base .. "posts/records/" .. own[math.random(#own)], authed,
		    '{"title":"Bench update ' .. math.random(1, 1000000) .. '"}')
	end,
	auth = function()
		return wrk.format("POST", base .. "users/auth-with-password", json,
		    string.format('{"identity":"user%04d@example.com","password":"password123"}',
		    math.random(1, users)))
	end,
}

local make = requests[scenario]
if make == nil then
	error("unknown SCENARIO " .. scenario)
end
if (scenario == "view" and #ids == 0) or (scenario == "update" and #own == 0) then
	error("SCENARIO " .. scenario .. " needs its ids (RECORDS_IDS, RECORDS_OWN_IDS)")
end

request = function()
	return make()
end
