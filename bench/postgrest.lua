-- bench/postgrest.lua: the PostgREST benchmark's scenarios for wrk.
--
-- SCENARIO (environment) picks one: GETSingle, GETSingleEmbed, GETAllEmbed, POSTSingle,
-- POSTBulk, RPCSimple, RPCGETSingle, RPCGETSingleEmbed, PATCHSingle.  Random ids as in the
-- benchmark's later scripts: artists 1..275, albums 1..347 (ids above 275 return []),
-- actors 1..203.  PREFIX (environment) is the API's mount point, /rest/v1 by default.
--
-- As the benchmark's own requests: RPCSimple adds n .. n+4 for a random n in 1..347;
-- RPCGETSingleEmbed selects album_id,title,artist_id,track(*,genre(*)); PATCHSingle sends
-- {"last_update":"now"}; the POST bodies change with every request (the names and e-mail
-- carry a per-thread counter, as the k6 scripts' carried the virtual user and iteration;
-- employee_id stays 1334: the benchmark dropped the table's keys, and so does the seeder).

local scenario = os.getenv("SCENARIO") or "GETSingle"
local prefix = os.getenv("PREFIX") or "/rest/v1"

local columns = "employee_id,first_name,last_name,title,reports_to,birth_date,hire_date," ..
    "address,city,state,country,postal_code,phone,fax,email"

-- One employee object, its names and e-mail numbered n.
local function employee(n)
	return '{"employee_id":1334,"first_name":"Virtual ' .. n .. '","last_name":"User ' .. n ..
	    '","title":"Load Tester","reports_to":1,"birth_date":"1920-01-01",' ..
	    '"hire_date":"2020-01-01","address":"666 10 Street SW","city":"Calgary",' ..
	    '"state":"AB","country":"Canada","postal_code":"T2P 5G","phone":"(403) 246-9887",' ..
	    '"fax":"+1 (403) 246-9899","email":"vu' .. n .. '@chinookcorp.com"}'
end

-- A counter per thread, each thread's started at its own random multiple of 100000.
local iter = 0
local function next_n()
	iter = iter + 1
	return iter
end

local function bulk()
	local n, rows = next_n(), {}
	for i = 1, 20 do
		rows[i] = employee(n * 20 + i)
	end
	return "[" .. table.concat(rows, ",") .. "]"
end

local json = { ["Content-Type"] = "application/json" }

-- Bytes sent are counted per thread (wrk reports only what it received) and printed by
-- done() as "Sent bytes: N", which bench_wrk reads for the report's "data sent" column.
local threads = {}
sent = 0

function setup(thread)
	table.insert(threads, thread)
end

function init(args)
	math.randomseed(os.time() + math.floor(os.clock() * 1e6))
	iter = math.random(0, 999) * 100000
end

function done(summary, latency, requests)
	local total = 0
	for _, t in ipairs(threads) do
		total = total + (t:get("sent") or 0)
	end
	io.write(string.format("Sent bytes: %d\n", total))
end

local requests = {
	GETSingle = function()
		return wrk.format("GET", prefix .. "/artist?select=*&artist_id=eq." .. math.random(1, 275))
	end,
	GETSingleEmbed = function()
		return wrk.format("GET", prefix .. "/album?select=*,track(*,genre(*))&artist_id=eq." ..
		    math.random(1, 347))
	end,
	GETAllEmbed = function()
		return wrk.format("GET", prefix .. "/album?select=*,track(*,genre(*))")
	end,
	POSTSingle = function()
		return wrk.format("POST", prefix .. "/employee", json, employee(next_n()))
	end,
	POSTBulk = function()
		return wrk.format("POST", prefix .. "/employee?columns=" .. columns, json, bulk())
	end,
	RPCSimple = function()
		local n = math.random(1, 347)
		return wrk.format("GET", prefix .. "/rpc/add_them?a=" .. n .. "&b=" .. n + 1 ..
		    "&c=" .. n + 2 .. "&d=" .. n + 3 .. "&e=" .. n + 4)
	end,
	RPCGETSingle = function()
		return wrk.format("GET", prefix .. "/rpc/ret_artists?select=*&artist_id=eq." ..
		    math.random(1, 275))
	end,
	RPCGETSingleEmbed = function()
		return wrk.format("GET", prefix .. "/rpc/ret_albums?select=album_id,title,artist_id,track(*,genre(*))" ..
		    "&artist_id=eq." ..
		    math.random(1, 347))
	end,
	PATCHSingle = function()
		return wrk.format("PATCH", prefix .. "/actor?actor_id=eq." .. math.random(1, 203), json,
		    '{"last_update":"now"}')
	end,
}

local make = requests[scenario]
if make == nil then
	error("unknown SCENARIO " .. scenario)
end

function request()
	local r = make()
	sent = sent + #r
	return r
end
