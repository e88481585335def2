-- bench/peers/platformatic.lua: the PostgREST benchmark's GETSingle in @platformatic/db's
-- own URL shape (its automatic REST API: /<entity>?where.<camelCaseField>.eq=N), random artists
-- 1..275 as in bench/postgrest.lua.  The other scenarios have no equivalent there: its
-- REST API does not embed related rows in one response.

function init(args)
	math.randomseed(os.time() + math.floor(os.clock() * 1e6))
end

function request()
	return wrk.format("GET", "/artist?where.artistId.eq=" .. math.random(1, 275))
end
