/*
 * pw_sanitizer_hook.c: in a sanitizer build (-DPW_SANITIZE=ON) every program
 * links this file. When a process dies of a sanitizer report (an ASan error,
 * a leak at exit, a UBSan error: the build does not recover from those) and
 * PW_SANITIZER_DIR is set, it leaves a file PW_SANITIZER_DIR/died.<pid>
 * naming the program, so that tests/integration/run.sh can fail the test
 * during which it happened even when the process was a service in the
 * background. The text of an ASan or LeakSanitizer report goes where
 * ASAN_OPTIONS log_path says (run.sh: the same folder, asan.<pid>); GCC links
 * UBSan as a runtime of its own that neither reads that nor calls ASan's
 * death callback, so this file also points UBSan's reports to
 * PW_SANITIZER_DIR/ubsan.<pid> and gives it the same callback.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sanitizer/common_interface_defs.h>

static void pw_sanitizer_on_death(void)
{
	const char *dir = getenv("PW_SANITIZER_DIR");
	if (!dir || !*dir)
		return;
	char path[PATH_MAX], exe[PATH_MAX], line[PATH_MAX + 128];
	if (snprintf(path, sizeof path, "%s/died.%ld", dir, (long)getpid()) >= (int)sizeof path)
		return;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = '\0';
	int len = snprintf(line, sizeof line,
	                   "%s (pid %ld) died of a sanitizer report: see asan.%ld or ubsan.%ld here\n",
	                   exe, (long)getpid(), (long)getpid(), (long)getpid());
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (len > 0 && write(fd, line, strlen(line)) < 0) {
		/* nothing more to do: the process is dying */
	}
	close(fd);
}

__attribute__((constructor)) static void pw_sanitizer_install(void)
{
	__sanitizer_set_death_callback(pw_sanitizer_on_death);
	/*
	 * GCC links UBSan as a runtime of its own (libubsan.so.1 beside
	 * libasan.so.8), with its own copy of the common code: the call above
	 * reaches ASan's; UBSan's is asked for by name.
	 */
	void *ubsan = dlopen("libubsan.so.1", RTLD_LAZY | RTLD_NOLOAD);
	if (ubsan) {
		void (*set)(void (*)(void));
		*(void **)&set = dlsym(ubsan, "__sanitizer_set_death_callback");
		if (set)
			set(pw_sanitizer_on_death);
		/* and its reports go to DIR/ubsan.<pid> (it reads no log_path of ours) */
		const char *dir = getenv("PW_SANITIZER_DIR");
		static char path[PATH_MAX];
		void (*report_path)(const char *);
		*(void **)&report_path = dlsym(ubsan, "__sanitizer_set_report_path");
		if (dir && *dir && report_path &&
		    snprintf(path, sizeof path, "%s/ubsan", dir) < (int)sizeof path)
			report_path(path);
		dlclose(ubsan);
	}
}
