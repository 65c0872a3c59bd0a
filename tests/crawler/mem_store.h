// OpenMemStore opens an IssueStore on RocksDB's in-memory Env, for crawler tests:
//   ASSERT_NO_FATAL_FAILURE(OpenMemStore(&env_, &store_));
#pragma once

#include <memory>

#include "crawler/issue_store.h"
#include "gtest/gtest.h"
#include "rocksdb/env.h"

namespace issuescope::crawler {

inline void OpenMemStore(std::unique_ptr<rocksdb::Env>* env, std::unique_ptr<IssueStore>* store) {
  env->reset(rocksdb::NewMemEnv(rocksdb::Env::Default()));
  StoreOptions options;
  options.env = env->get();
  auto opened = IssueStore::Open("/store", options);
  ASSERT_TRUE(opened.ok()) << opened.status();
  *store = *std::move(opened);
}

}  // namespace issuescope::crawler
