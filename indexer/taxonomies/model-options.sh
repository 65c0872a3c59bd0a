# Sourced by train-default-model.sh and evaluate-heldout.sh: the shipped model's training options
# in one place, so the held-out evaluation always measures what is shipped. Sets $nlbse (NLBSE'24's
# training split, kind only) and the array $options; exits 1 naming $1 (the calling script) when
# ../shared/data (or $ISSUESCOPE_SHARED_DATA) is missing. Options chosen by leave-one-repository-
# out on devset-1 (docs/TAXONOMY.md).
data="${ISSUESCOPE_SHARED_DATA:-$PWD/../shared/data}"
nlbse="$data/labeled/nlbse24-issue-classification/data/issues_train.csv"
if [ ! -f "$nlbse" ]; then
  echo "$1: $nlbse not found (../shared/data is needed)" >&2
  exit 1
fi
options=(--also-train "$nlbse" --hash-bits 16 --signal-text-features --title-char-ngrams 4
         --title-weight 0.75)
