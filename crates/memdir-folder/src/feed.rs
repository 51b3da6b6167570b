//! A folder's change feed: inotify watches on every folder of a memory, drained into events.
//!
//! Two long-lived readers follow a folder this way: warm search (which files to re-read) and
//! git history (which paths a person may have edited since the last change, so finding hand
//! edits needs no walk of the whole folder). Each keeps its own feed, since each drains at its
//! own moments under its own lock.
//!
//! Why nothing is missed: the kernel queues an event before the write that caused it returns,
//! and each folder is watched before it is listed, so a file made meanwhile is either listed or
//! reported. When the queue overflows, the root goes away, or a watch cannot be added, the
//! feed is [`Lost`]: the reader starts over from a walk. Like the walk, the feed never enters
//! `.memdir/` or `.git/`, and leaves out in-flight temp files and names that are not UTF-8.

#[cfg(target_os = "linux")]
pub use inotify_feed::Feed;
#[cfg(not(target_os = "linux"))]
pub use no_feed::Feed;

/// The feed lost track of the folder (queue overflow, root gone, out of watches): start over.
#[derive(Debug)]
pub struct Lost;

/// What happened to a path, relative to the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The path, relative to the root.
    pub rel: String,
    /// True for a folder.
    pub dir: bool,
    /// What happened to it.
    pub kind: Kind,
}

/// The kind of an [`Event`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Created or moved in. A folder's arrival is followed by an `Arrived` event for each
    /// regular file found in it (it is watched before it is listed).
    Arrived,
    /// Deleted or moved away (a folder with everything under it).
    Left,
    /// Its bytes or attributes changed.
    Changed,
}

#[cfg(target_os = "linux")]
mod inotify_feed {
    use super::{Event, Kind, Lost};
    use crate::walk::{is_internal, visit};
    use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};
    use rustix::io::Errno;
    use std::collections::HashMap;
    use std::mem::MaybeUninit;
    use std::os::fd::OwnedFd;
    use std::path::{Path, PathBuf};

    /// What a directory watch reports: anything that changes a file's bytes or a folder's entries.
    fn watch_flags() -> WatchFlags {
        WatchFlags::CREATE
            | WatchFlags::DELETE
            | WatchFlags::MOVED_FROM
            | WatchFlags::MOVED_TO
            | WatchFlags::MODIFY
            | WatchFlags::CLOSE_WRITE
            | WatchFlags::ATTRIB
            | WatchFlags::DELETE_SELF
            | WatchFlags::MOVE_SELF
            | WatchFlags::ONLYDIR
            | WatchFlags::DONT_FOLLOW
            | WatchFlags::EXCL_UNLINK
    }

    /// An inotify instance watching every folder under a root.
    pub struct Feed {
        root: PathBuf,
        fd: OwnedFd,
        /// Watch descriptor to the folder it watches, relative to the root (`""` is the root).
        dirs: HashMap<i32, String>,
    }

    impl Feed {
        /// Watches every folder under `root`; `file` gets each regular file found, in path order.
        pub fn start(root: &Path, file: &mut dyn FnMut(String)) -> Result<Feed, Lost> {
            let fd =
                inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK).map_err(|_| Lost)?;
            let mut feed = Feed {
                root: root.to_path_buf(),
                fd,
                dirs: HashMap::new(),
            };
            feed.watch("", file)?;
            Ok(feed)
        }

        /// The root this feed watches.
        pub fn root(&self) -> &Path {
            &self.root
        }

        /// Watches the folder `rel` and everything under it, handing each regular file to `file`.
        /// Each folder's watch comes before its listing.
        fn watch(&mut self, rel: &str, file: &mut dyn FnMut(String)) -> Result<(), Lost> {
            let (fd, dirs, root) = (&self.fd, &mut self.dirs, &self.root);
            visit(
                root,
                rel,
                &mut |dir| {
                    let abs = if dir.is_empty() {
                        root.clone()
                    } else {
                        root.join(dir)
                    };
                    match inotify::add_watch(fd, &abs, watch_flags()) {
                        Ok(wd) => {
                            dirs.insert(wd, dir.to_string());
                            Ok(true)
                        }
                        // Gone or replaced by something that is not a folder since it was seen.
                        Err(Errno::NOENT | Errno::NOTDIR | Errno::ACCESS) if !dir.is_empty() => {
                            Ok(false)
                        }
                        // Out of watches (or the root is unusable): the feed cannot keep up here.
                        Err(_) => Err(Lost),
                    }
                },
                file,
            )
        }

        /// Stops watching the folder `rel` and everything under it.
        fn unwatch(&mut self, rel: &str) {
            let prefix = format!("{rel}/");
            let watches: Vec<i32> = self
                .dirs
                .iter()
                .filter(|(_, d)| *d == rel || d.starts_with(&prefix))
                .map(|(wd, _)| *wd)
                .collect();
            for wd in watches {
                self.dirs.remove(&wd);
                // A deleted folder's watch is already gone; a moved one's is removed here.
                let _ = inotify::remove_watch(&self.fd, wd);
            }
        }

        /// Every change queued since the last drain, in the order it happened. Folders that
        /// arrived are watched (and their files reported); folders that left are no longer watched.
        pub fn drain(&mut self) -> Result<Vec<Event>, Lost> {
            let mut buf = [MaybeUninit::<u8>::uninit(); 16 << 10];
            let mut raw = Vec::new();
            {
                let mut reader = inotify::Reader::new(&self.fd, &mut buf);
                loop {
                    match reader.next() {
                        Ok(ev) => raw.push((
                            ev.wd(),
                            ev.events(),
                            ev.file_name()
                                .and_then(|n| n.to_str().ok())
                                .map(str::to_string),
                        )),
                        Err(Errno::AGAIN) => break,
                        Err(Errno::INTR) => {}
                        Err(_) => return Err(Lost),
                    }
                }
            }
            let mut out = Vec::new();
            for (wd, flags, name) in raw {
                if flags.contains(ReadFlags::QUEUE_OVERFLOW) {
                    return Err(Lost);
                }
                let Some(dir) = self.dirs.get(&wd).cloned() else {
                    continue;
                };
                if flags
                    .intersects(ReadFlags::IGNORED | ReadFlags::DELETE_SELF | ReadFlags::MOVE_SELF)
                {
                    if flags.contains(ReadFlags::IGNORED) {
                        self.dirs.remove(&wd);
                    }
                    if dir.is_empty() {
                        // The root itself went away or moved.
                        return Err(Lost);
                    }
                    // The parent's own event reports the folder.
                    continue;
                }
                let Some(name) = name else { continue };
                if is_internal(&name) {
                    continue;
                }
                let rel = if dir.is_empty() {
                    name
                } else {
                    format!("{dir}/{name}")
                };
                let kind = if flags.intersects(ReadFlags::CREATE | ReadFlags::MOVED_TO) {
                    Kind::Arrived
                } else if flags.intersects(ReadFlags::DELETE | ReadFlags::MOVED_FROM) {
                    Kind::Left
                } else {
                    Kind::Changed
                };
                let is_dir = flags.contains(ReadFlags::ISDIR);
                if is_dir && kind != Kind::Changed {
                    // Whatever was watched under that name is gone; an arrival is watched anew.
                    self.unwatch(&rel);
                }
                out.push(Event {
                    rel: rel.clone(),
                    dir: is_dir,
                    kind,
                });
                if is_dir && kind == Kind::Arrived {
                    let mut found = Vec::new();
                    self.watch(&rel, &mut |f| found.push(f))?;
                    out.extend(found.into_iter().map(|rel| Event {
                        rel,
                        dir: false,
                        kind: Kind::Arrived,
                    }));
                }
            }
            Ok(out)
        }
    }
}

/// Where there is no inotify: the feed never starts, and its readers walk the folder.
#[cfg(not(target_os = "linux"))]
mod no_feed {
    use super::{Event, Lost};
    use std::path::Path;

    /// Never starts.
    pub struct Feed;

    impl Feed {
        /// Always [`Lost`].
        pub fn start(_root: &Path, _file: &mut dyn FnMut(String)) -> Result<Feed, Lost> {
            Err(Lost)
        }

        /// The root (never reached: a feed never starts).
        pub fn root(&self) -> &Path {
            Path::new("")
        }

        /// Never reached.
        pub fn drain(&mut self) -> Result<Vec<Event>, Lost> {
            Err(Lost)
        }
    }
}
