/*
 * hello: the bare fcgi2 hello-world worker, the ceiling of the architecture.
 *
 * No sluice code at all: FCGX_InitRequest on fd 0 (the socket sluiced hands over), a
 * single accept loop, a fixed 15-byte JSON answer.  The proxy benchmark runs it as an
 * endpoint (binary=) beside /health so that the cost of sluice's own serve loop shows as
 * the gap between the two.  It has no graceful shutdown: sluiced's SIGTERM ends it.
 */
#include <fcgiapp.h>

int
main(void)
{
	static const char resp[] = "Status: 200 OK\r\nContent-Type: application/json\r\n"
	    "Content-Length: 15\r\n\r\n{\"status\":\"ok\"}";
	FCGX_Request r;

	if (FCGX_Init() != 0 || FCGX_InitRequest(&r, 0, 0) != 0)
		return 1;
	while (FCGX_Accept_r(&r) >= 0) {
		FCGX_PutStr(resp, (int)sizeof(resp) - 1, r.out);
		FCGX_Finish_r(&r);
	}
	return 0;
}
