/*
 * db_sqlite_vfs.c: "sluice-mmap", a VFS over SQLite's own ("unix") that keeps a
 * connection's memory map of its database file across the other connections' writes.
 *
 * SQLite's pager throws a connection's whole map away whenever it begins a read
 * transaction and finds the WAL changed (xUnfetch(0, NULL) after its cache reset), and
 * the unix VFS maps the file again at the next page read: on a file written all the time,
 * every write costs every other connection a munmap(), an mmap() and a page fault for
 * every page it touches afterwards.  Nothing requires it of a map of the database file
 * itself: the map is MAP_SHARED, so it always shows the file as it is, and a page that
 * the connection's snapshot has in the WAL is read from the WAL, never from the map.  The
 * only map that must go is one whose file changed size since it was made: shorter, the
 * map reaches past the end (a read there is SIGBUS); longer, the map lacks the new pages
 * (read with pread() until the map is made again).  So this VFS passes the discard on
 * only when the database file's size is not the one it had just after its map was made,
 * and drops it otherwise (one fstat()); with the file grown in chunks
 * (SQLITE_FCNTL_CHUNK_SIZE, sqlite_chunk) its size changes once per chunk rather than at
 * every checkpoint.  Every other call goes to the unix VFS as it is; other files (the WAL,
 * journals) are passed through untouched.
 *
 * The connections of a process are threads with a connection each (SQLITE_OPEN_NOMUTEX),
 * so a file's state here is only ever used by one thread at a time.
 */
#include <sqlite3.h>
#include <string.h>

#include "extern.h"

#define DB_SQLITE_VFS_NAME	"sluice-mmap"

struct vfs_file {
	sqlite3_file base;
	sqlite3_file *real;	/* the unix VFS's file, stored right after this struct */
	int main_db;		/* the database file: its map is kept */
	int fresh;		/* no map made since the last discard passed on */
	sqlite3_int64 size;	/* the file's size just after its map was made; -1: unknown,
				 * and the next discard is passed on */
};

static sqlite3_vfs *vfs_real;
static sqlite3_vfs vfs_mmap;

#define REAL(f)	(((struct vfs_file *)(void *)(f))->real)

static int
vfs_close(sqlite3_file *f)
{
	int rc = REAL(f)->pMethods->xClose(REAL(f));

	f->pMethods = NULL;
	return rc;
}

static int
vfs_read(sqlite3_file *f, void *p, int n, sqlite3_int64 off)
{
	return REAL(f)->pMethods->xRead(REAL(f), p, n, off);
}

static int
vfs_write(sqlite3_file *f, const void *p, int n, sqlite3_int64 off)
{
	return REAL(f)->pMethods->xWrite(REAL(f), p, n, off);
}

static int
vfs_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	return REAL(f)->pMethods->xTruncate(REAL(f), size);
}

static int
vfs_sync(sqlite3_file *f, int flags)
{
	return REAL(f)->pMethods->xSync(REAL(f), flags);
}

static int
vfs_file_size(sqlite3_file *f, sqlite3_int64 *size)
{
	return REAL(f)->pMethods->xFileSize(REAL(f), size);
}

static int
vfs_lock(sqlite3_file *f, int lock)
{
	return REAL(f)->pMethods->xLock(REAL(f), lock);
}

static int
vfs_unlock(sqlite3_file *f, int lock)
{
	return REAL(f)->pMethods->xUnlock(REAL(f), lock);
}

static int
vfs_check_reserved(sqlite3_file *f, int *out)
{
	return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out);
}

/* A new map size makes the unix VFS map the file again at once or at the next read:
 * the size recorded no longer says anything about that map. */
static int
vfs_file_control(sqlite3_file *f, int op, void *arg)
{
	struct vfs_file *v = (struct vfs_file *)(void *)f;

	if (op == SQLITE_FCNTL_MMAP_SIZE)
		v->size = -1;
	return v->real->pMethods->xFileControl(v->real, op, arg);
}

static int
vfs_sector_size(sqlite3_file *f)
{
	return REAL(f)->pMethods->xSectorSize(REAL(f));
}

static int
vfs_device_characteristics(sqlite3_file *f)
{
	return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f));
}

static int
vfs_shm_map(sqlite3_file *f, int region, int size, int extend, void volatile **pp)
{
	return REAL(f)->pMethods->xShmMap(REAL(f), region, size, extend, pp);
}

static int
vfs_shm_lock(sqlite3_file *f, int off, int n, int flags)
{
	return REAL(f)->pMethods->xShmLock(REAL(f), off, n, flags);
}

static void
vfs_shm_barrier(sqlite3_file *f)
{
	REAL(f)->pMethods->xShmBarrier(REAL(f));
}

static int
vfs_shm_unmap(sqlite3_file *f, int del)
{
	return REAL(f)->pMethods->xShmUnmap(REAL(f), del);
}

/* The first read after a discard passed on makes the map: its file's size is noted. */
static int
vfs_fetch(sqlite3_file *f, sqlite3_int64 off, int n, void **pp)
{
	struct vfs_file *v = (struct vfs_file *)(void *)f;
	int rc = v->real->pMethods->xFetch(v->real, off, n, pp);

	if (v->main_db && v->fresh) {
		v->fresh = 0;
		if (v->real->pMethods->xFileSize(v->real, &v->size) != SQLITE_OK)
			v->size = -1;
	}
	return rc;
}

/* A page given back goes back; the whole map goes only when the file's size moved. */
static int
vfs_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p)
{
	struct vfs_file *v = (struct vfs_file *)(void *)f;
	sqlite3_int64 now;

	if (p == NULL && v->main_db && v->size >= 0 &&
	    v->real->pMethods->xFileSize(v->real, &now) == SQLITE_OK && now == v->size)
		return SQLITE_OK;
	if (p == NULL) {
		v->fresh = 1;
		v->size = -1;
	}
	return v->real->pMethods->xUnfetch(v->real, off, p);
}

static const sqlite3_io_methods vfs_methods = {
	3,
	vfs_close,
	vfs_read,
	vfs_write,
	vfs_truncate,
	vfs_sync,
	vfs_file_size,
	vfs_lock,
	vfs_unlock,
	vfs_check_reserved,
	vfs_file_control,
	vfs_sector_size,
	vfs_device_characteristics,
	vfs_shm_map,
	vfs_shm_lock,
	vfs_shm_barrier,
	vfs_shm_unmap,
	vfs_fetch,
	vfs_unfetch,
};

static int
vfs_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out)
{
	struct vfs_file *v = (struct vfs_file *)(void *)f;
	int rc;

	(void)vfs;
	memset(v, 0, sizeof(*v));
	v->real = (sqlite3_file *)(void *)(v + 1);
	v->main_db = (flags & SQLITE_OPEN_MAIN_DB) != 0;
	v->fresh = 1;
	v->size = -1;
	rc = vfs_real->xOpen(vfs_real, name, v->real, flags, out);
	/* SQLite calls xClose only on a file whose pMethods is set. */
	v->base.pMethods = v->real->pMethods != NULL ? &vfs_methods : NULL;
	return rc;
}

int
db_sqlite_vfs_register(void)
{
	sqlite3_vfs *real = sqlite3_vfs_find("unix");

	if (real == NULL || real->iVersion < 3)
		return -1;
	vfs_real = real;
	vfs_mmap = *real;
	vfs_mmap.pNext = NULL;
	vfs_mmap.zName = DB_SQLITE_VFS_NAME;
	vfs_mmap.szOsFile = (int)sizeof(struct vfs_file) + real->szOsFile;
	vfs_mmap.xOpen = vfs_open;
	return sqlite3_vfs_register(&vfs_mmap, 0) == SQLITE_OK ? 0 : -1;
}

const char *
db_sqlite_vfs_name(void)
{
	return vfs_real != NULL ? DB_SQLITE_VFS_NAME : NULL;
}
