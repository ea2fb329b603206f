// zrec sync: copies a store or a root to a bucket (s3://), from a URL (s3://, http(s)://)
// to a local directory, or from one local directory to another (docs/remote.md,
// "Publishing to a bucket"). The source is checked first (verify's structure check, or
// every record with --verify); the order files go out in is sync_source.h's, the
// bucket's side sync/s3_uploader.h, the local side sync/sync_local.h.
#include <unistd.h>

#include <atomic>
#include <cstdio>

#include <CLI/CLI.hpp>

#include "zrec/dataset.h"
#include "zrec/remote.h"

#include "cli/app/command.h"
#include "cli/formats/printable.h"
#include "cli/options/json_option.h"
#include "cli/os/interrupt.h"
#include "cli/report/command_report.h"
#include "cli/report/json.h"
#include "cli/report/progress.h"
#include "cli/sync/s3_uploader.h"
#include "cli/sync/sync_local.h"
#include "cli/sync/sync_plan.h"
#include "cli/sync/sync_source.h"
#include "zrec_support/s3_client.h"

namespace zrec::cli {

namespace {

struct SyncArgs {
  std::string src, dst;
  bool verify = false;
  bool dry_run = false;
  bool json = false;
  bool force = false;
  uint64_t part_mib = 8;
  int lanes = 4;
};

Status print_line(const std::string& line) {
  if (std::fwrite(line.data(), 1, line.size(), stdout) != line.size()) return io_error("cannot write to stdout");
  return Status::ok();
}

Status sync_to_bucket(const SyncArgs& a, const GlobalOptions& g, const SyncSource& src, CommandReport& report) {
  ZREC_ASSIGN_OR_RETURN(std::unique_ptr<S3Client> s3, S3Client::open(g.transfer_context()));
  ZREC_ASSIGN_OR_RETURN(const UploadPlan plan, plan_upload(*s3, src, a.dst));
  if (!plan.different.empty() && !a.force)
    return Status(StatusCode::kAlreadyExists,
                  "'" + a.dst + "' holds another dataset (" + plan.different + "): refused to replace it without -f");
  uint64_t to_send = 0;
  if (a.dry_run) {
    JsonWriter files;
    files.begin_array();
    for (const FilePlan& p : plan.files) {
      const uint64_t bytes = p.kind == SendKind::kSkip                                 ? 0
                             : p.kind == SendKind::kAppend && p.dst_size >= (5u << 20) ? p.size - p.dst_size
                                                                                       : p.size;
      to_send += bytes;
      files.begin_object().key("path").value(p.file.rel).key("action").value(send_kind_name(p.kind));
      files.key("bytes").value(bytes).end_object();
      if (!report.json())
        ZREC_RETURN_IF_ERROR(print_line(std::string(send_kind_name(p.kind)) + "\t" + std::to_string(bytes) + "\t" +
                                        printable(p.file.rel) + "\n"));
    }
    if (plan.stale_card) {
      files.begin_object().key("path").value(kCardFile).key("action").value("remove").key("bytes").value(0);
      files.end_object();
      if (!report.json()) ZREC_RETURN_IF_ERROR(print_line(std::string("remove\t0\t") + kCardFile + "\n"));
    }
    files.end_array();
    report.set("dry_run", true).set_json("plan", files.str()).set("bytes_to_send", to_send);
    report.set("requests", s3->stats().requests);
    return report.finish("would send " + std::to_string(to_send) + " bytes to '" + a.dst + "' (nothing written)");
  }
  ProgressMeter meter(g, "sync");
  for (const FilePlan& p : plan.files) to_send += p.kind == SendKind::kSkip ? 0 : p.size;
  meter.set_total_bytes(to_send);
  std::atomic<uint64_t> sent{0};
  UploadOptions options;
  options.min_part_bytes = a.part_mib << 20;
  options.lanes = a.lanes;
  options.on_bytes = [&](uint64_t n) { meter.update(0, sent += n); };
  UploadCounts counts;
  ZREC_RETURN_IF_ERROR(upload(*s3, plan, a.dst, options, counts));
  meter.finish();
  const S3ClientStats stats = s3->stats();
  report.set("files", counts.files).set("skipped", counts.skipped).set("parts", counts.parts);
  report.set("resumed_parts", counts.resumed_parts).set("copied_bytes", counts.copied_bytes);
  report.set("aborted_uploads", counts.aborted_uploads).set("bytes_sent", stats.bytes_sent);
  report.set("requests", stats.requests).set("retries", stats.retries);
  return report.finish("sent " + std::to_string(counts.files) + " files (" + std::to_string(stats.bytes_sent) +
                       " bytes in " + std::to_string(stats.requests) + " requests) to '" + a.dst + "', skipped " +
                       std::to_string(counts.skipped) + " it held already");
}

Status sync_to_local(const SyncArgs& a, const GlobalOptions& g, const SyncSource& src, CommandReport& report) {
  if (a.dry_run) {
    if (::access(a.dst.c_str(), F_OK) == 0 && !a.force)
      return Status(StatusCode::kAlreadyExists,
                    "'" + a.dst + "' already exists: sync builds a new local copy (-f replaces it, in one rename)");
    JsonWriter files;
    files.begin_array();
    for (const SyncFile& f : src.files) {
      files.begin_object().key("path").value(f.rel).key("action").value("new").end_object();
      if (!report.json()) ZREC_RETURN_IF_ERROR(print_line("new\t" + printable(f.rel) + "\n"));
    }
    files.end_array();
    report.set("dry_run", true).set_json("plan", files.str());
    return report.finish("would copy " + std::to_string(src.files.size()) + " files to '" + a.dst +
                         "' (nothing written)");
  }
  LocalCopyCounts counts;
  const RemoteStats before = g.remote_reads ? g.remote_reads->load() : RemoteStats{};
  ZREC_RETURN_IF_ERROR(copy_to_local(src, a.dst, a.force, g, counts));
  const RemoteStats after = g.remote_reads ? g.remote_reads->load() : RemoteStats{};
  report.set("files", counts.files).set("skipped", counts.skipped).set("bytes_written", counts.bytes);
  report.set("requests", after.requests - before.requests).set("bytes_received", after.bytes - before.bytes);
  report.set("retries", after.retries - before.retries);
  return report.finish("copied " + std::to_string(counts.files) + " files (" + std::to_string(counts.bytes) +
                       " bytes) to '" + a.dst + "', kept " + std::to_string(counts.skipped) +
                       " an interrupted run had written");
}

Status run_sync(const SyncArgs& a, const GlobalOptions& g) {
  CommandReport report("sync", g, a.json);
  const bool to_bucket = is_s3_url(a.dst);
  if (is_url(a.dst) && !to_bucket)
    return invalid_argument("'" + redact_url(a.dst) + "' is an http(s) URL: sync writes to s3:// or a local directory");
  if (to_bucket && is_url(a.src))
    return invalid_argument("sync copies between a URL and a local directory; from '" + redact_url(a.src) + "' to '" +
                            a.dst + "', sync to a local copy first");
  InterruptScope interruptible;  // SIGINT/SIGTERM stop transfers: 130/143
  ZREC_ASSIGN_OR_RETURN(const SyncSource src, examine_source(a.src, a.verify, g));
  report.set("source", redact_url(a.src)).set("destination", redact_url(a.dst)).set("root", src.root);
  report.set("length", src.length);
  if (a.verify) report.set("records_decoded", src.records_decoded);
  return to_bucket ? sync_to_bucket(a, g, src, report) : sync_to_local(a, g, src, report);
}

}  // namespace

Command register_sync(CLI::App& root, const GlobalOptions& global) {
  auto args = std::make_shared<SyncArgs>();
  CLI::App* cmd = root.add_subcommand("sync", "Copy a store or root to a bucket, or from a URL to a local directory");
  cmd->add_option("src", args->src, "Store or root: a local directory or a URL (s3://, http(s)://)")->required();
  cmd->add_option("dst", args->dst, "Where the copy goes: s3://BUCKET/PREFIX, or a local directory")->required();
  cmd->add_flag("--verify", args->verify, "Decode every record of the source first (default: its structure only)");
  cmd->add_flag("--dry-run", args->dry_run, "Print what would be sent, write nothing");
  cmd->add_flag("-f,--force", args->force, "Replace another dataset at DST");
  cmd->add_option("--part-mib", args->part_mib, "Least size of a multipart upload's part, in MiB")
      ->check(CLI::Range(5, 5120))
      ->capture_default_str();
  cmd->add_option("--lanes", args->lanes, "Parts sent at once")->check(CLI::Range(1, 64))->capture_default_str();
  add_json_flag(cmd, args->json);
  return Command{cmd, [args, &global]() { return run_sync(*args, global); }, nullptr,
                 [args]() { return args->json || args->dry_run; }};
}

}  // namespace zrec::cli
