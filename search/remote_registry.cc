#include "remote_registry.h"

#include "facets.h"
#include "ranking_weight.h"

namespace issuescope::search {

Xapian::Registry RemoteRegistry() {
  Xapian::Registry registry;
  registry.register_weighting_scheme(RankingWeight());
  registry.register_match_spy(FacetCounter({}, 1));
  registry.register_match_spy(AggregateCounter({}));
  return registry;
}

}  // namespace issuescope::search
