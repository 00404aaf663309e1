// Time libTMCG's verifiable shuffle of a deck and its decryption share, for bench_tmcg.py.
//
// Usage: bench_tmcg CARDS REPEAT [GROUP_FILE]
//
// Two seats share a Barnett-Smart VTMF key (a 2048-bit field, a 256-bit subgroup: libTMCG's
// defaults). Seat A shuffles a masked deck of CARDS cards and proves it with Groth's
// non-interactive proof (TMCG_MixStack + TMCG_ProveStackEquality_Groth_noninteractive); seat B
// parses the proof and checks it (TMCG_VerifyStackEquality_Groth_noninteractive). Then A makes
// its decryption share of one card with its Chaum-Pedersen proof and B checks it. Each step is
// timed REPEAT times in CPU seconds (CLOCK_PROCESS_CPUTIME_ID); the group and the generators
// are set up once, untimed. GROUP_FILE, when given, keeps the group between runs (made and
// written when absent). Prints one "key value..." line per figure.

#include <libTMCG.hh>

#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

double cpu_now() {
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void print_times(const char *key, const std::vector<double> &ts) {
	std::cout << key;
	for (double t : ts)
		std::cout << " " << t;
	std::cout << std::endl;
}

}  // namespace

int main(int argc, char **argv) {
	if (argc < 3) {
		std::cerr << "usage: bench_tmcg CARDS REPEAT [GROUP_FILE]" << std::endl;
		return 2;
	}
	const size_t cards = std::stoul(argv[1]);
	const size_t repeat = std::stoul(argv[2]);
	const std::string group_file = argc > 3 ? argv[3] : "";
	if (!init_libTMCG()) {
		std::cerr << "init_libTMCG() failed" << std::endl;
		return 1;
	}
	std::cout << "version " << version_libTMCG() << std::endl;

	// The group: read from GROUP_FILE, or made (and written there).
	std::string group;
	double t = cpu_now();
	{
		std::ifstream in(group_file);
		if (!group_file.empty() && in.good()) {
			std::stringstream buf;
			buf << in.rdbuf();
			group = buf.str();
		}
	}
	if (group.empty()) {
		BarnettSmartVTMF_dlog made;
		std::stringstream out;
		made.PublishGroup(out);
		group = out.str();
		if (!group_file.empty())
			std::ofstream(group_file) << group;
		std::cout << "group_made " << cpu_now() - t << std::endl;
	}
	std::stringstream ga(group), gb(group);
	BarnettSmartVTMF_dlog a(ga), b(gb);
	if (!a.CheckGroup() || !b.CheckGroup()) {
		std::cerr << "the group does not check" << std::endl;
		return 1;
	}
	std::cout << "field_bits " << mpz_sizeinbase(a.p, 2) << std::endl;
	std::cout << "subgroup_bits " << mpz_sizeinbase(a.q, 2) << std::endl;

	// The joint key of two seats.
	a.KeyGenerationProtocol_GenerateKey();
	b.KeyGenerationProtocol_GenerateKey();
	std::stringstream ka, kb;
	a.KeyGenerationProtocol_PublishKey(ka);
	b.KeyGenerationProtocol_PublishKey(kb);
	if (!a.KeyGenerationProtocol_UpdateKey(kb) || !b.KeyGenerationProtocol_UpdateKey(ka)) {
		std::cerr << "key exchange failed" << std::endl;
		return 1;
	}
	a.KeyGenerationProtocol_Finalize();
	b.KeyGenerationProtocol_Finalize();

	// Groth's shuffle argument for CARDS cards: A makes the generators, B receives them.
	t = cpu_now();
	GrothVSSHE vs_a(cards, a.p, a.q, a.k, a.g, a.h);
	std::stringstream vs_wire;
	vs_a.PublishGroup(vs_wire);
	GrothVSSHE vs_b(cards, vs_wire);
	if (!vs_a.CheckGroup() || !vs_b.CheckGroup()) {
		std::cerr << "the shuffle generators do not check" << std::endl;
		return 1;
	}
	std::cout << "generators " << cpu_now() - t << std::endl;

	unsigned long type_bits = 1;
	while ((1UL << type_bits) < cards)
		type_bits++;
	SchindelhauerTMCG tmcg(64, 2, type_bits);
	TMCG_OpenStack<VTMF_Card> open;
	for (size_t type = 0; type < cards; type++) {
		VTMF_Card c;
		tmcg.TMCG_CreateOpenCard(c, &a, type);
		open.push(type, c);
	}
	// A masked deck (one untimed shuffle), as every shuffle after a hand's first sees.
	TMCG_Stack<VTMF_Card> deck, masked;
	deck.push(open);
	{
		TMCG_StackSecret<VTMF_CardSecret> ss;
		tmcg.TMCG_CreateStackSecret(ss, false, deck.size(), &a);
		tmcg.TMCG_MixStack(deck, masked, ss, &a);
	}

	std::vector<double> t_prove, t_verify, t_token, t_token_verify;
	size_t proof_bytes = 0;
	for (size_t r = 0; r < repeat; r++) {
		TMCG_Stack<VTMF_Card> shuffled;
		std::stringstream proof;
		t = cpu_now();
		TMCG_StackSecret<VTMF_CardSecret> ss;
		tmcg.TMCG_CreateStackSecret(ss, false, masked.size(), &a);
		tmcg.TMCG_MixStack(masked, shuffled, ss, &a);
		tmcg.TMCG_ProveStackEquality_Groth_noninteractive(masked, shuffled, ss, &a, &vs_a, proof);
		t_prove.push_back(cpu_now() - t);
		// What travels: the shuffled deck and the proof, as text.
		std::stringstream wire;
		wire << shuffled << std::endl << proof.str();
		proof_bytes = wire.str().size();

		std::stringstream in(wire.str());
		t = cpu_now();
		TMCG_Stack<VTMF_Card> received;
		in >> received;
		bool ok = in.good() && tmcg.TMCG_VerifyStackEquality_Groth_noninteractive(
			masked, received, &b, &vs_b, in);
		t_verify.push_back(cpu_now() - t);
		if (!ok) {
			std::cerr << "a shuffle did not verify" << std::endl;
			return 1;
		}
	}
	// A's decryption share of one card with its proof, checked by B (timed per share).
	const size_t shares = 20;
	const VTMF_Card &card = masked[0];
	for (size_t r = 0; r < repeat; r++) {
		std::vector<std::string> made(shares);
		t = cpu_now();
		for (size_t i = 0; i < shares; i++) {
			std::stringstream out;
			a.VerifiableDecryptionProtocol_Prove(card.c_1, out);
			made[i] = out.str();
		}
		t_token.push_back((cpu_now() - t) / shares);
		b.VerifiableDecryptionProtocol_Verify_Initialize(card.c_1);
		t = cpu_now();
		for (size_t i = 0; i < shares; i++) {
			std::stringstream in(made[i]);
			if (!b.VerifiableDecryptionProtocol_Verify_Update(card.c_1, in)) {
				std::cerr << "a decryption share did not verify" << std::endl;
				return 1;
			}
		}
		t_token_verify.push_back((cpu_now() - t) / shares);
	}
	std::cout << "cards " << cards << std::endl;
	std::cout << "wire_bytes " << proof_bytes << std::endl;
	print_times("shuffle", t_prove);
	print_times("verify", t_verify);
	print_times("token", t_token);
	print_times("token_verify", t_token_verify);
	return 0;
}
