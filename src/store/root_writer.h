// The writer's hold on a root's marker (zrec/dataset.h, "roots"): the lock and the
// commit of the root protocol, which zrec::DatasetWriter drives. Not installed: no
// program but the library's own writer marks or commits a root.
#pragma once

#include <memory>
#include <string>

#include "zrec/context.h"
#include "zrec/dataset.h"
#include "zrec/status.h"

#include "zrec_support/file.h"

namespace zrec {

// The writer's hold on a root: the marker open and exclusively locked, and its state.
class RootWriter {
 public:
  // Locks the marker of `root` (kBusy when another process holds it, unless `wait`:
  // then it blocks, ending early on `cancel` as zrec/context.h says) and reads it. kNotFound when
  // `root` has no marker. Stale temporaries of earlier commits (".zrec-root.tmp-XXXXXX",
  // unlocked) are removed once the lock is held.
  static Result<std::unique_ptr<RootWriter>> open(const std::string& root, const LockWait& wait,
                                                  const CancelToken& cancel = {});

  // Marks `root` (an existing directory) with `initial`: the marker is written and
  // synced under a temporary name, locked, then linked into place, so it appears whole
  // and locked. kAlreadyExists when `root` has a marker already (another process may
  // have made it meanwhile; open() it instead).
  static Result<std::unique_ptr<RootWriter>> create(const std::string& root, const RootState& initial);

  ~RootWriter();
  RootWriter(const RootWriter&) = delete;
  RootWriter& operator=(const RootWriter&) = delete;

  const std::string& root() const { return root_; }
  const RootState& state() const { return state_; }

  // Commits `state` (the second phase, after every stream it counts was published):
  // writes it to a locked temporary, syncs it, renames it over the marker and syncs the
  // directory. The lock moves to the new marker before the old one is let go, so no
  // other writer gets in between. On failure the marker holds either the old state or
  // the new one (the message says which is known), and the writer can only be dropped.
  Status commit(const RootState& state);

  // Removes the marker (a run that created it and then failed before it published
  // anything) and lets the lock go. Another writer waiting for the lock then finds no
  // marker and starts over.
  Status remove();

 private:
  RootWriter(std::string root, io::File marker, RootState state);
  std::string root_;
  io::File marker_;  // open, exclusively flocked
  RootState state_;
  bool failed_ = false;
};

}  // namespace zrec
