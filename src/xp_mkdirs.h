/* xp_mkdirs.h: creating the missing folders above an output file, as mkdir -p does. */
#ifndef XP_MKDIRS_H
#define XP_MKDIRS_H

#include <stddef.h>

/* Creates the folders the file at path is to be in, each missing one with
 * mode 0777 less the umask (as `mkdir -p`).  Folders that exist are used as
 * they are, through symbolic links too, except another user's link in a
 * sticky world-writable folder (/tmp) not owned by that user: one planted
 * there must not send our files elsewhere (the kernel's rule with
 * fs.protected_symlinks=1, which may be off).  Returns 0, or -1 with
 * errno set and, when err is not NULL, why in err, naming the folder at
 * fault: ENOTDIR for a part of the path that exists and is not a folder,
 * ELOOP for a link not followed, or mkdir's or lstat's errno. */
int xp_make_parent_dirs(const char *path, char *err, size_t errlen);

#endif
