//! The kernel-facing half of sealing: wipe the initial environment block, and make the process
//! undumpable.

/// What sealing did; `problems` says, in words, what it could not do on this machine.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sealed {
    /// The initial environment block (what `/proc/<pid>/environ` shows) is zeros now.
    pub environ_wiped: bool,
    /// Same-user processes without CAP_SYS_PTRACE cannot read this process's memory.
    pub undumpable: bool,
    pub problems: Vec<String>,
}

#[cfg(target_os = "linux")]
pub fn seal() -> Sealed {
    let mut sealed = Sealed::default();
    match linux::wipe_initial_environment() {
        Ok(()) => sealed.environ_wiped = true,
        Err(why) => sealed.problems.push(why),
    }
    match linux::set_undumpable() {
        Ok(()) => sealed.undumpable = true,
        Err(why) => sealed.problems.push(why),
    }
    sealed
}

#[cfg(not(target_os = "linux"))]
pub fn seal() -> Sealed {
    Sealed {
        problems: vec![
            "the environment block is only wiped on Linux; provider keys were still moved out of the environment".to_string(),
        ],
        ..Sealed::default()
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use nix::libc;

    /// The start and end addresses of the initial environment block: fields 50 and 51 of
    /// `/proc/self/stat` (Linux 3.5+).
    fn environment_block() -> Result<(usize, usize), String> {
        let stat = std::fs::read_to_string("/proc/self/stat")
            .map_err(|e| format!("cannot read /proc/self/stat ({e})"))?;
        // The command name (field 2) is in parentheses and may hold spaces: count after it.
        let after = stat
            .rfind(')')
            .and_then(|i| stat.get(i + 1..))
            .ok_or("/proc/self/stat has no command name")?;
        let fields: Vec<&str> = after.split_whitespace().collect();
        // `after` starts at field 3.
        let field = |n: usize| -> Result<usize, String> {
            fields
                .get(n - 3)
                .and_then(|f| f.parse::<usize>().ok())
                .ok_or_else(|| format!("/proc/self/stat has no field {n}"))
        };
        let (start, end) = (field(50)?, field(51)?);
        if start == 0 || end <= start || end - start > 16 * 1024 * 1024 {
            return Err(format!(
                "the kernel reports an unusable environment block ({start:#x}..{end:#x})"
            ));
        }
        Ok((start, end))
    }

    /// Move every variable's text to the heap, check that nothing points into the initial
    /// block any more, and zero it.
    pub fn wipe_initial_environment() -> Result<(), String> {
        let (start, end) = environment_block()?;
        // set_var copies "NAME=value" into a fresh allocation and points `environ` at it.
        for (name, value) in std::env::vars_os() {
            std::env::set_var(&name, &value);
        }
        // SAFETY: `environ` is the C library's NULL-terminated array of pointers to
        // "NAME=value" strings; this runs before any other thread exists, so nothing changes it
        // while it is read.
        let still_inside = unsafe {
            let mut at = libc::environ as *const *const libc::c_char;
            let mut inside = 0;
            while !at.is_null() && !(*at).is_null() {
                let p = *at as usize;
                if p >= start && p < end {
                    inside += 1;
                }
                at = at.add(1);
            }
            inside
        };
        if still_inside > 0 {
            return Err(format!(
                "{still_inside} variable(s) could not be moved out of the initial environment block, so it was left as it is"
            ));
        }
        // SAFETY: [start, end) is this process's own initial environment block (the kernel says
        // so), mapped writable on the stack, and nothing refers to it any more (checked above).
        unsafe { std::ptr::write_bytes(start as *mut u8, 0, end - start) };
        Ok(())
    }

    pub fn set_undumpable() -> Result<(), String> {
        // SAFETY: a plain system call on integers.
        let done = unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) };
        if done == 0 {
            Ok(())
        } else {
            Err(format!(
                "the kernel refused to make the engine undumpable ({})",
                std::io::Error::last_os_error()
            ))
        }
    }
}
